package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

func newBacklogPruneCmd(g *globals) *cobra.Command {
	var dry bool
	c := &cobra.Command{
		Use:   "prune",
		Short: "Remove the worktrees of parked and failed workers whose work is safe in a ref (their branch or a salvage snapshot)",
		Long: `Remove the worktrees backlog runs kept for parked and failed issues, but only
where nothing is lost: no uncommitted change is left in the worktree, and every
commit of its HEAD is on the worker branch or in a salvage snapshot
(refs/wave/salvage/...). Any other worktree is kept, and prune says why. The
branches stay: a later run recreates a worktree from its branch. --dry-run
changes nothing (no fetch, no ref moved, nothing removed): it reads each
worker branch from its worktree and says what prune would do.`,
		Example: `  wave-orchestrator backlog prune
  wave-orchestrator backlog prune --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openLane(g)
			if err != nil {
				return err
			}
			repo, err := gitops.Open(c.Context(), e.lane.RepoRoot, e.gitOptions(nil))
			if err != nil {
				return err
			}
			dirs, err := runlog.List(e.layout.StateDir)
			if err != nil {
				return err
			}
			removed, kept := 0, 0
			for _, dir := range dirs {
				r, _, err := runlog.Read(dir)
				if err != nil {
					return err
				}
				for _, is := range r.List() {
					if is.Worktree == "" || (is.State != backlog.StateParked && is.State != backlog.StateFailed) {
						continue
					}
					if _, err := os.Stat(is.Worktree); err != nil {
						continue // already gone
					}
					ok := pruneWorktree(c.Context(), repo, is, dry, c.OutOrStdout())
					if ok {
						removed++
					} else {
						kept++
					}
				}
				pruneRunDir(r, dry, c.OutOrStdout())
			}
			verb := "removed"
			if dry {
				verb = "would remove"
			}
			fmt.Fprintf(c.OutOrStdout(), "%s %d worktree(s), kept %d\n", verb, removed, kept)
			return nil
		},
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "say what would be removed and kept; fetch, move and remove nothing")
	return c
}

// pruneWorktree removes one parked or failed worker's checkout when its
// work is safe in a ref of the clone, and says what it did or why it
// kept it. The worker branch is first brought from the checkout into the
// clone (commits made there since the run, by the worker or a person,
// are then on it); nothing of git runs in the checkout itself. A dry run
// changes nothing: it reads the checkout's branch instead of fetching it,
// so it says what the real prune would do.
func pruneWorktree(ctx context.Context, repo *gitops.Repo, is *backlog.IssueRun, dry bool, w io.Writer) bool {
	where := termtext.Escape(is.Worktree)
	keep := func(why string) bool {
		fmt.Fprintf(w, "#%d: kept %s: %s\n", is.Number, where, why)
		return false
	}
	head, dirty, err := repo.CheckoutState(ctx, is.Worktree)
	switch {
	case err != nil:
		return keep(fmt.Sprintf("cannot read its state: %v", err))
	case dirty > 0:
		return keep(fmt.Sprintf("%d uncommitted change(s) that no ref holds", dirty))
	}
	branch := "refs/heads/" + is.Branch
	// What the clone's branch is once brought from the checkout: a dry
	// run reads it there and fetches nothing.
	branchTip := branch
	switch {
	case is.Branch == "":
	case dry:
		tip, ok, err := repo.CheckoutBranch(ctx, is.Worktree, is.Branch)
		if err != nil {
			return keep(fmt.Sprintf("cannot read its branch: %v", err))
		}
		if ok {
			branchTip = tip
		}
	default:
		if _, _, err := repo.FetchFromCheckout(ctx, is.Worktree, is.Branch); err != nil {
			return keep(fmt.Sprintf("cannot bring its branch into the clone: %v", err))
		}
	}
	safeIn := ""
	for i, ref := range append([]string{branchTip}, is.SalvageRefs...) {
		if n, err := repo.CheckoutAhead(ctx, is.Worktree, head, ref); err == nil && n == 0 {
			safeIn = ref
			if i == 0 {
				safeIn = branch
			}
			break
		}
	}
	if safeIn == "" {
		return keep(fmt.Sprintf("its HEAD has commits neither %s nor a salvage snapshot holds", termtext.Escape(is.Branch)))
	}
	if dry {
		fmt.Fprintf(w, "#%d: would remove %s (work safe in %s)\n", is.Number, where, termtext.Escape(safeIn))
		return true
	}
	if err := repo.RemoveCheckout(ctx, is.Worktree, safeIn); err != nil {
		return keep(err.Error())
	}
	fmt.Fprintf(w, "#%d: removed %s (work safe in %s)\n", is.Number, where, termtext.Escape(safeIn))
	return true
}

// pruneRunDir removes run r's worktree directory (<worktreeRoot>/
// <project>-<run>) once no worktree is left in it: a run whose
// worktrees have all gone leaves nothing behind.
func pruneRunDir(r *backlog.Run, dry bool, w io.Writer) {
	seen := map[string]bool{}
	for _, is := range r.List() {
		dir := filepath.Dir(is.Worktree)
		if is.Worktree == "" || seen[dir] || !strings.HasSuffix(filepath.Base(dir), "-"+r.Info.ID) {
			continue
		}
		seen[dir] = true
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) > 0 {
			continue
		}
		if dry {
			fmt.Fprintf(w, "would remove the empty directory %s of run %s\n", termtext.Escape(dir), r.Info.ID)
		} else if os.Remove(dir) == nil {
			fmt.Fprintf(w, "removed the empty directory %s of run %s\n", termtext.Escape(dir), r.Info.ID)
		}
	}
}
