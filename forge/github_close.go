package forge

import (
	"context"
	"fmt"

	"github.com/google/go-github/v84/github"
)

// ClosePR closes pull request n if it is open, after commenting body on
// it once (by marker), so whoever finds it closed reads why. A PR already
// closed or merged is left as it is, so a repeat after a crash is a no-op.
func (g *GitHub) ClosePR(ctx context.Context, n int, marker, body string) error {
	var p *github.PullRequest
	err := g.do(ctx, fmt.Sprintf("get PR #%d", n), true, func(ctx context.Context) error {
		var err error
		p, _, err = g.c.PullRequests.Get(ctx, g.owner, g.repo, n)
		return err
	})
	if err != nil {
		return err
	}
	if p.GetState() != "open" {
		return nil
	}
	if _, err := g.EnsureComment(ctx, n, marker, body); err != nil {
		return err
	}
	g.writeMu.Lock()
	defer g.writeMu.Unlock()
	return g.do(ctx, fmt.Sprintf("close PR #%d", n), true, func(ctx context.Context) error {
		_, _, err := g.c.PullRequests.Edit(ctx, g.owner, g.repo, n, &github.PullRequest{State: github.Ptr("closed")})
		return err
	})
}

// ClosePR implements Source: the local source opens no worker pull
// requests (its one "pull request" is the final PR file), so there is
// nothing to close.
func (l *Local) ClosePR(ctx context.Context, n int, marker, body string) error {
	if err := validMarker(marker, body); err != nil {
		return fmt.Errorf("local: close PR #%d: %w", n, err)
	}
	return ctx.Err()
}
