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
an issue already merged, what its merge commit brought. A worker whose checkout (its own
clone) is still there is read from it: its branch as it is there now. Uncommitted work in the
checkout is not in it: an issue whose worker has committed nothing prints no diff and says
so on stderr, naming its checkout's uncommitted changes. The change is the worker's text:
control characters are shown escaped (\x1b), never sent to the terminal.`,
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
			diff, err := issueDiff(c.Context(), repo, r.Info.WaveBranch, r.Info.Base, is)
			if err != nil {
				return fmt.Errorf("backlog diff #%d: %w", n, err)
			}
			if strings.TrimSpace(diff) == "" {
				// Nothing on stdout, which a pipe into git apply reads.
				fmt.Fprintln(c.ErrOrStderr(), noChange(c.Context(), repo, r.Info.WaveBranch, is))
				return nil
			}
			return printDiff(c.OutOrStdout(), diff)
		},
	}
	c.Flags().StringVar(&run, "run", "", "backlog run id (default: the newest)")
	return c
}

// issueDiff is the change of issue is: its merge's, once merged (the
// worker branch may be gone by then), else its worker branch's since it
// left the wave branch (or the run's base, runBase, once the wave branch
// is gone).
func issueDiff(ctx context.Context, repo *gitops.Repo, wave, runBase string, is *backlog.IssueRun) (string, error) {
	if is.MergeCommit != "" {
		if _, err := repo.RevParse(ctx, is.MergeCommit+"^2"); err == nil {
			return repo.DiffText(ctx, is.MergeCommit+"^1", is.MergeCommit, maxDiff)
		}
	}
	if is.Branch == "" {
		return "", fmt.Errorf("no worker branch yet (state %s)", is.State)
	}
	// The wave branch of a run that merged nothing is deleted at its end:
	// it was cut from the run's base, so the change is the same there.
	base, err := firstRef(ctx, repo, "refs/remotes/origin/"+wave, "refs/heads/"+wave, "refs/remotes/origin/"+runBase)
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

// noChange says that issue is has no committed change, and where its
// uncommitted work is when its checkout has some (read without running
// git in it).
func noChange(ctx context.Context, repo *gitops.Repo, wave string, is *backlog.IssueRun) string {
	msg := fmt.Sprintf("backlog diff: #%d has no committed change: its branch %s has no commit beyond %s (state %s)",
		is.Number, termtext.Escape(is.Branch), termtext.Escape(wave), is.State)
	if is.Worktree == "" {
		return msg
	}
	if _, n, err := repo.CheckoutState(ctx, is.Worktree); err == nil && n > 0 {
		msg += fmt.Sprintf("; its worktree %s has %d uncommitted change(s), which no diff shows (git -C %s status)",
			termtext.Escape(is.Worktree), n, termtext.Escape(is.Worktree))
	}
	return msg
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
