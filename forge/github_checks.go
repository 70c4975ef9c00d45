package forge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/google/go-github/v84/github"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// ErrNoProtectionAccess is wrapped by RequiredChecks when the token may
// not read the branch's protection (403: it takes administration rights)
// and no ruleset names a required check either.
var ErrNoProtectionAccess = errors.New("the token may not read the branch's protection")

// Checks returns the checks commit sha reports: its check runs (the
// latest run of each) and, unless every name in want is among them, its
// commit statuses. Every page is a conditional request, so asking again
// about a commit whose checks did not change costs no rate limit.
func (g *GitHub) Checks(ctx context.Context, sha string, want []string) ([]backlog.Check, error) {
	out, err := g.checkRuns(ctx, sha)
	if err != nil {
		return nil, err
	}
	found := 0
	for _, name := range want {
		if slices.ContainsFunc(out, func(c backlog.Check) bool { return c.Name == name }) {
			found++
		}
	}
	if len(want) > 0 && found == len(want) {
		return out, nil
	}
	statuses, err := g.statuses(ctx, sha)
	if err != nil {
		return nil, err
	}
	return append(out, statuses...), nil
}

func (g *GitHub) checkRuns(ctx context.Context, sha string) ([]backlog.Check, error) {
	opts := &github.ListCheckRunsOptions{Filter: github.Ptr("latest"), ListOptions: github.ListOptions{PerPage: 100}}
	var out []backlog.Check
	for page := 1; ; page++ {
		var got *github.ListCheckRunsResults
		var resp *github.Response
		err := g.do(ctx, fmt.Sprintf("list check runs of %s (page %d)", shortSHA(sha), page), true, func(ctx context.Context) error {
			var err error
			got, resp, err = g.c.Checks.ListCheckRunsForRef(ctx, g.owner, g.repo, sha, opts)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, r := range got.CheckRuns {
			out = append(out, toCheckRun(r))
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (g *GitHub) statuses(ctx context.Context, sha string) ([]backlog.Check, error) {
	opts := &github.ListOptions{PerPage: 100}
	var out []backlog.Check
	for page := 1; ; page++ {
		var got *github.CombinedStatus
		var resp *github.Response
		err := g.do(ctx, fmt.Sprintf("read the statuses of %s (page %d)", shortSHA(sha), page), true, func(ctx context.Context) error {
			var err error
			got, resp, err = g.c.Repositories.GetCombinedStatus(ctx, g.owner, g.repo, sha, opts)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, st := range got.Statuses {
			out = append(out, toStatus(st))
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// toCheckRun reads a check run as the gate does: not completed is
// pending; success, neutral and skipped are green (as branch protection
// takes them); any other conclusion is red.
func toCheckRun(r *github.CheckRun) backlog.Check {
	c := backlog.Check{Name: r.GetName(), Kind: backlog.CheckRun, Conclusion: r.GetConclusion(),
		Title: r.GetOutput().GetTitle(), Summary: r.GetOutput().GetSummary(), URL: r.GetHTMLURL()}
	if c.URL == "" {
		c.URL = r.GetDetailsURL()
	}
	switch {
	case r.GetStatus() != "completed":
		c.State, c.Conclusion = backlog.CheckPending, r.GetStatus()
	case c.Conclusion == "success" || c.Conclusion == "neutral" || c.Conclusion == "skipped":
		c.State = backlog.CheckSuccess
	default:
		c.State = backlog.CheckFailure
	}
	return c
}

func toStatus(st *github.RepoStatus) backlog.Check {
	c := backlog.Check{Name: st.GetContext(), Kind: backlog.CheckStatus, Conclusion: st.GetState(),
		Summary: st.GetDescription(), URL: st.GetTargetURL()}
	switch c.Conclusion {
	case "success":
		c.State = backlog.CheckSuccess
	case "failure", "error":
		c.State = backlog.CheckFailure
	default:
		c.State = backlog.CheckPending
	}
	return c
}

// RequiredChecks are the status checks branch requires: those of its
// classic branch protection and of the repository rulesets that apply to
// it, each name once. A branch nothing protects requires none. Reading
// classic protection takes administration rights; a token without them
// (403) still gets the rulesets' checks, and ErrNoProtectionAccess only
// when those name none.
func (g *GitHub) RequiredChecks(ctx context.Context, branch string) ([]string, error) {
	var names []string
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var rsc *github.RequiredStatusChecks
	err := g.do(ctx, "read the required checks of "+branch, true, func(ctx context.Context) error {
		var err error
		rsc, _, err = g.c.Repositories.GetRequiredStatusChecks(ctx, g.owner, g.repo, branch)
		return err
	})
	denied := statusOf(err) == http.StatusForbidden
	switch {
	case err == nil:
		if rsc.Checks != nil {
			for _, c := range *rsc.Checks {
				add(c.Context)
			}
		}
		if rsc.Contexts != nil {
			for _, c := range *rsc.Contexts {
				add(c)
			}
		}
	case errors.Is(err, ErrNotFound) || errors.Is(err, github.ErrBranchNotProtected) || denied:
		// Not protected (or not ours to read): the rulesets may still say.
	default:
		return nil, err
	}
	var rules *github.BranchRules
	err = g.do(ctx, "read the rules of "+branch, true, func(ctx context.Context) error {
		var err error
		rules, _, err = g.c.Repositories.GetRulesForBranch(ctx, g.owner, g.repo, branch, &github.ListOptions{PerPage: 100})
		return err
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if rules != nil {
		for _, r := range rules.RequiredStatusChecks {
			for _, c := range r.Parameters.RequiredStatusChecks {
				add(c.Context)
			}
		}
	}
	if denied && len(names) == 0 {
		return nil, fmt.Errorf("github: required checks of %s: %w (it takes administration rights)", branch, ErrNoProtectionAccess)
	}
	return names, nil
}

func shortSHA(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
