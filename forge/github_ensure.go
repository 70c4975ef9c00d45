package forge

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// GitHub has no idempotency key for creations, so a create whose response
// was lost is followed by a re-read, never by a blind second create. This
// many creates are tried in one Ensure* call.
const createAttempts = 3

// EnsureComment posts body on issue n unless a comment there by the
// token's own login already ends with marker, and returns the existing or
// new comment. Anyone can write a marker into a comment: one by another
// login is text, never proof that this comment was posted.
func (g *GitHub) EnsureComment(ctx context.Context, n int, marker, body string) (backlog.Comment, error) {
	if err := validMarker(marker, body); err != nil {
		return backlog.Comment{}, fmt.Errorf("github: comment on issue #%d: %w", n, err)
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	self, err := g.self(ctx)
	if err != nil {
		return backlog.Comment{}, fmt.Errorf("github: comment on issue #%d: %w", n, err)
	}
	// Comments Get read moments ago (listedFresh) stand in for the first
	// look: only this Source posts as self with this run's marker, and
	// every comment it creates (or may have created) drops them.
	comments, recent := g.recent.takeComments(n, g.now())
	for attempt := 1; ; attempt++ {
		if !recent {
			if comments, err = g.listComments(ctx, n); err != nil {
				return backlog.Comment{}, err
			}
		}
		recent = false
		if c, ok := findMarker(comments, marker, self); ok {
			return c, nil
		}
		var made *github.IssueComment
		g.recent.creating(n)
		transient, err := g.attempt(ctx, fmt.Sprintf("comment on issue #%d", n), false, func(ctx context.Context) error {
			var err error
			made, _, err = g.c.Issues.CreateComment(ctx, g.owner, g.repo, n, &github.IssueComment{Body: github.Ptr(body)})
			return err
		})
		if err == nil {
			return toComment(made), nil
		}
		if !transient || attempt >= createAttempts {
			return backlog.Comment{}, err
		}
		if err := g.pause(ctx, attempt, "comment", err); err != nil {
			return backlog.Comment{}, err
		}
	}
}

// pause logs that a create's outcome is unknown and backs off before the
// re-read that decides whether to create again.
func (g *GitHub) pause(ctx context.Context, attempt int, what string, cause error) error {
	d := backoff(attempt - 1)
	g.log.Warn("GitHub "+what+" may not have been created; re-reading before trying again",
		"attempt", attempt, "in", d.String(), "err", cause.Error())
	if err := g.sleep(ctx, d); err != nil {
		return fmt.Errorf("github: %s: %w", what, err)
	}
	return nil
}

// EnsurePR makes sure one open pull request head→base exists with this
// title and body: it creates it, and when GitHub answers 422 (one is
// open already) lists and updates the open one. A lost response leads to
// listing again too, never to a second PR.
func (g *GitHub) EnsurePR(ctx context.Context, head, base, title, body string) (PR, error) {
	if strings.TrimSpace(head) == "" || strings.TrimSpace(base) == "" {
		return PR{}, fmt.Errorf("github: ensure PR: head and base are required")
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	var rejected error // a 422 that listing again has to explain
	for attempt := 1; ; attempt++ {
		// The first try creates without listing: GitHub refuses a second
		// open PR head→base (422), and a 422 or an unknown outcome lists
		// before anything else is done, so no look is needed up front.
		if attempt > 1 {
			prs, err := g.listPRs(ctx, head, base, "open")
			if err != nil {
				return PR{}, err
			}
			if len(prs) > 0 {
				return g.updatePR(ctx, prs[0], title, body)
			}
			if rejected != nil {
				return PR{}, rejected
			}
		}
		var made *github.PullRequest
		transient, err := g.attempt(ctx, fmt.Sprintf("create PR %s → %s", head, base), false, func(ctx context.Context) error {
			var err error
			made, _, err = g.c.PullRequests.Create(ctx, g.owner, g.repo, &github.NewPullRequest{
				Title: github.Ptr(title), Head: github.Ptr(head), Base: github.Ptr(base), Body: github.Ptr(body),
			})
			return err
		})
		switch {
		case err == nil:
			return toPR(made), nil
		case statusOf(err) == http.StatusUnprocessableEntity:
			rejected = err
		case !transient || attempt >= createAttempts:
			return PR{}, err
		default:
			if err := g.pause(ctx, attempt, "pull request", err); err != nil {
				return PR{}, err
			}
		}
	}
}

func (g *GitHub) updatePR(ctx context.Context, p *github.PullRequest, title, body string) (PR, error) {
	if p.GetTitle() == title && p.GetBody() == body {
		return toPR(p), nil
	}
	var got *github.PullRequest
	err := g.do(ctx, fmt.Sprintf("update PR #%d", p.GetNumber()), true, func(ctx context.Context) error {
		var err error
		got, _, err = g.c.PullRequests.Edit(ctx, g.owner, g.repo, p.GetNumber(),
			&github.PullRequest{Title: github.Ptr(title), Body: github.Ptr(body)})
		return err
	})
	if err != nil {
		return PR{}, err
	}
	return toPR(got), nil
}

// FindPR returns the pull request head→base in any state (the open one if
// there is one, else the newest), or nil when there is none.
func (g *GitHub) FindPR(ctx context.Context, head, base string) (*PR, error) {
	prs, err := g.listPRs(ctx, head, base, "all")
	if err != nil || len(prs) == 0 {
		return nil, err
	}
	best := prs[0]
	for _, p := range prs[1:] {
		if (p.GetState() == "open") != (best.GetState() == "open") {
			if p.GetState() == "open" {
				best = p
			}
			continue
		}
		if p.GetNumber() > best.GetNumber() {
			best = p
		}
	}
	pr := toPR(best)
	return &pr, nil
}

// listPRs lists head→base pull requests in state. The server filters by
// head and base, and we check again: GitHub ignores a head filter it cannot
// parse and would then return every PR.
func (g *GitHub) listPRs(ctx context.Context, head, base, state string) ([]*github.PullRequest, error) {
	branch, qualified := head, head
	if i := strings.Index(head, ":"); i >= 0 {
		branch = head[i+1:]
	} else {
		qualified = g.owner + ":" + head
	}
	opts := &github.PullRequestListOptions{State: state, Head: qualified, Base: base,
		ListOptions: github.ListOptions{PerPage: 100}}
	var out []*github.PullRequest
	for page := 1; ; page++ {
		var got []*github.PullRequest
		var resp *github.Response
		err := g.do(ctx, fmt.Sprintf("list PRs %s → %s (page %d)", head, base, page), true, func(ctx context.Context) error {
			var err error
			got, resp, err = g.c.PullRequests.List(ctx, g.owner, g.repo, opts)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, p := range got {
			if p.GetHead().GetRef() == branch && p.GetBase().GetRef() == base {
				out = append(out, p)
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func toPR(p *github.PullRequest) PR {
	return PR{
		Number: p.GetNumber(), URL: p.GetHTMLURL(),
		Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef(),
		Title: p.GetTitle(), Body: p.GetBody(), State: p.GetState(),
		Merged: p.GetMerged() || p.MergedAt != nil,
	}
}
