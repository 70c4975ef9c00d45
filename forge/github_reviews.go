package forge

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/go-github/v84/github"
)

// Review is a pull request review that asks for changes, with its inline
// comments. All of it is the reviewer's text: untrusted.
type Review struct {
	ID       int64
	Author   string
	Body     string
	CommitID string // the head the review was given on
	Comments []ReviewComment
}

// ReviewComment is one inline comment of a review.
type ReviewComment struct {
	Path string
	Line int
	Body string
}

// reviewerRoles are the author associations whose reviews count: people
// with write access. Anyone may review a public repository's PR; a
// stranger's "request changes" must not hold a merge or reach a worker.
var reviewerRoles = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// ChangesRequested returns the reviews on pull request n that ask for
// changes and are their author's latest verdict (a later approval or
// dismissal withdraws one; comments alone change nothing), from people
// with write access, in the order they were given.
func (g *GitHub) ChangesRequested(ctx context.Context, n int) ([]Review, error) {
	reviews, err := g.listReviews(ctx, n)
	if err != nil {
		return nil, err
	}
	g.recent.putReviews(n, len(reviews), g.now())
	latest := map[string]*github.PullRequestReview{}
	var authors []string
	for _, r := range reviews {
		who := r.GetUser().GetLogin()
		switch r.GetState() {
		case "CHANGES_REQUESTED", "APPROVED", "DISMISSED":
		default:
			continue
		}
		if _, seen := latest[who]; !seen {
			authors = append(authors, who)
		}
		latest[who] = r
	}
	var out []Review
	for _, who := range authors {
		r := latest[who]
		if r.GetState() != "CHANGES_REQUESTED" || !slices.Contains(reviewerRoles, r.GetAuthorAssociation()) {
			continue
		}
		comments, err := g.reviewComments(ctx, n, r.GetID())
		if err != nil {
			return nil, err
		}
		out = append(out, Review{ID: r.GetID(), Author: who, Body: r.GetBody(), CommitID: r.GetCommitID(), Comments: comments})
	}
	slices.SortStableFunc(out, func(a, b Review) int { return int(a.ID - b.ID) })
	return out, nil
}

func (g *GitHub) listReviews(ctx context.Context, n int) ([]*github.PullRequestReview, error) {
	opts := &github.ListOptions{PerPage: 100}
	var out []*github.PullRequestReview
	for page := 1; ; page++ {
		var got []*github.PullRequestReview
		var resp *github.Response
		err := g.do(ctx, fmt.Sprintf("list reviews of PR #%d (page %d)", n, page), true, func(ctx context.Context) error {
			var err error
			got, resp, err = g.c.PullRequests.ListReviews(ctx, g.owner, g.repo, n, opts)
			return err
		})
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *GitHub) reviewComments(ctx context.Context, n int, id int64) ([]ReviewComment, error) {
	opts := &github.ListOptions{PerPage: 100}
	var out []ReviewComment
	for page := 1; ; page++ {
		var got []*github.PullRequestComment
		var resp *github.Response
		err := g.do(ctx, fmt.Sprintf("list comments of review %d on PR #%d (page %d)", id, n, page), true, func(ctx context.Context) error {
			var err error
			got, resp, err = g.c.PullRequests.ListReviewComments(ctx, g.owner, g.repo, n, id, opts)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, c := range got {
			out = append(out, ReviewComment{Path: c.GetPath(), Line: c.GetLine(), Body: c.GetBody()})
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
