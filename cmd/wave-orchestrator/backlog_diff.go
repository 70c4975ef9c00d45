package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// maxDiff bounds what `backlog diff` prints (git says where it cut).
const maxDiff = 64 << 20

func newBacklogDiffCmd(g *globals) *cobra.Command {
	var run string
	c := &cobra.Command{
		Use:   "diff N",
		Short: "Print issue N's change: its worker branch against the wave branch (a merged issue: what its merge brought)",
		Long: `Print issue N's committed change in a backlog run, as git diff --stat --patch prints it:
the worker branch against where it left the wave branch (git diff <wave>...<worker>), or, for
an issue already merged, what its merge commit brought. A worker whose checkout is still there
is read from it (its branch as it is now). Uncommitted work in the checkout is not in it. The change is the worker's text: control characters are shown
escaped (\x1b), never sent to the terminal.`,
		Example: `  wave-orchestrator backlog diff 12
  wave-orchestrator backlog diff 12 --run 20261201T090000Z-backlog-3f9a1c`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n <= 0 {
				return usageError{fmt.Errorf("backlog diff: %q is not an issue number", termtext.Escape(args[0]))}
			}
			e, dir, err := openLaneRun(g, run)
			if err != nil {
				return err
			}
			r, _, err := runlog.Read(dir)
			if err != nil {
				return err
			}
			is, ok := r.Issues[n]
			if !ok {
				return usageError{fmt.Errorf("backlog diff: no issue #%d in backlog run %s", n, r.Info.ID)}
			}
			repo, err := gitops.Open(c.Context(), e.lane.RepoRoot, e.gitOptions(nil))
			if err != nil {
				return err
			}
			diff, err := issueDiff(c.Context(), repo, r.Info.WaveBranch, is)
			if err != nil {
				return fmt.Errorf("backlog diff #%d: %w", n, err)
			}
			return printDiff(c.OutOrStdout(), diff)
		},
	}
	c.Flags().StringVar(&run, "run", "", "backlog run id (default: the newest)")
	return c
}

// issueDiff is the change of issue is: its merge's, once merged (the
// worker branch may be gone by then), else its worker branch's since it
// left the wave branch.
func issueDiff(ctx context.Context, repo *gitops.Repo, wave string, is *backlog.IssueRun) (string, error) {
	if is.MergeCommit != "" {
		if _, err := repo.RevParse(ctx, is.MergeCommit+"^2"); err == nil {
			return repo.DiffText(ctx, is.MergeCommit+"^1", is.MergeCommit, maxDiff)
		}
	}
	if is.Branch == "" {
		return "", fmt.Errorf("no worker branch yet (state %s)", is.State)
	}
	base, err := firstRef(ctx, repo, "refs/remotes/origin/"+wave, "refs/heads/"+wave)
	if err != nil {
		return "", fmt.Errorf("wave branch %s: %w", wave, err)
	}
	if is.Worktree != "" {
		// The worker's own clone: its branch as it is there now.
		if _, err := os.Stat(is.Worktree); err == nil {
			return repo.DiffCheckout(ctx, is.Worktree, is.Branch, base, maxDiff)
		}
	}
	worker, err := firstRef(ctx, repo, "refs/heads/"+is.Branch, "refs/remotes/origin/"+is.Branch)
	if err != nil {
		return "", fmt.Errorf("worker branch %s: %w", is.Branch, err)
	}
	return repo.DiffText(ctx, base, worker, maxDiff)
}

func firstRef(ctx context.Context, repo *gitops.Repo, refs ...string) (string, error) {
	for _, ref := range refs {
		if _, err := repo.RevParse(ctx, ref); err == nil {
			return ref, nil
		}
	}
	return "", fmt.Errorf("not in this clone (looked for %s)", strings.Join(refs, ", "))
}

// printDiff writes the diff with every control character but newline and
// tab escaped: file contents are the worker's, and a terminal must not
// act on them.
func printDiff(w io.Writer, diff string) error {
	parts := strings.Split(diff, "\t")
	for i, p := range parts {
		parts[i] = termtext.EscapeLines(p)
	}
	_, err := io.WriteString(w, strings.Join(parts, "\t"))
	return err
}
