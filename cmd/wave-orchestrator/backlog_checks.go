package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// Checks `backlog` makes before it changes anything, so a mistake is a
// clear message and never an empty run, a raw git line or a stat error.

// checkWidth refuses a --width that is not a number of workers: 0 used to
// mean the default silently and -1 failed as a config error.
func checkWidth(c *cobra.Command) error {
	if !c.Flags().Changed("width") {
		return nil
	}
	if w := intFlag(c, "width"); w < 1 {
		return usageError{fmt.Errorf("--width %d: workers at once must be 1 or more (leave it out for the default, min(5, groups))", w)}
	}
	return nil
}

// errNoOrigin is what backlog mode says in place of git's "fatal:" lines
// when the clone has no origin.
const errNoOrigin = "backlog mode needs a remote named origin (claims are refs there): add one with `git remote add origin <url>` and push the base branch"

// checkOrigin fails with errNoOrigin when the clone has no origin.
func checkOrigin(ctx context.Context, repo *gitops.Repo) error {
	err := repo.CheckRemote(ctx)
	if errors.Is(err, gitops.ErrNoRemote) {
		return errors.New(errNoOrigin)
	}
	return err
}

// localBase is the branch a run over the local issue source is cut from
// and its final pull request targets: configured (github.baseBranch or
// --base) when set, which must be on origin; else origin's default
// branch (its HEAD); else, when origin's HEAD names no branch, the one
// branch origin has, or its main or master. An origin with no branch
// at all is an error naming the push that fixes it.
func localBase(ctx context.Context, repo *gitops.Repo, configured string) (string, error) {
	if configured != "" {
		_, ok, err := repo.RemoteHead(ctx, configured)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", fmt.Errorf("the base branch %s (github.baseBranch, or --base) is not on origin: push it first (`git push -u origin %s`)",
				termtext.Escape(configured), termtext.Escape(configured))
		}
		return configured, nil
	}
	def, err := repo.DefaultBranch(ctx)
	if err == nil {
		return def, nil
	}
	heads, err := repo.RemoteRefs(ctx, "refs/heads/")
	if err != nil {
		return "", err
	}
	var names []string
	for ref := range heads {
		names = append(names, strings.TrimPrefix(ref, "refs/heads/"))
	}
	slices.Sort(names)
	switch {
	case len(names) == 1:
		return names[0], nil
	case slices.Contains(names, "main"):
		return "main", nil
	case slices.Contains(names, "master"):
		return "master", nil
	case len(names) == 0:
		branch, _ := repo.CurrentBranch(ctx)
		if branch == "" {
			branch = "main"
		}
		return "", fmt.Errorf("origin has no branch yet, and backlog runs start from origin's base branch: push yours first (`git push -u origin %s`), or name another one that is on origin in github.baseBranch",
			termtext.Escape(branch))
	}
	return "", fmt.Errorf("origin's HEAD names no branch and origin has %d (%s): set github.baseBranch in wave.config.yaml (or pass --base) to the one runs start from",
		len(names), termtext.Escape(strings.Join(names, ", ")))
}

// localIssueDir is the local source's issue directory, or an error saying
// how to add issues when it does not exist (plain `init` makes none).
func localIssueDir(e *laneEnv) (string, error) {
	rel := e.cfg.Backlog.LocalDir
	dir := filepath.Join(e.lane.RepoRoot, filepath.FromSlash(rel))
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no backlog to work: %s does not exist. Add issues as %s/<n>-<slug>.md (front matter `title:` and `labels:`, the issue below it; `init --backlog-demo` scaffolds three), or use GitHub issues: set github.owner and github.repo in wave.config.yaml (token in $GITHUB_TOKEN)",
			rel, rel)
	}
	return dir, nil
}

// checkIssuesExist refuses a bounded selection naming an issue the source
// does not have, before a run exists: such a run would claim nothing,
// push and delete an empty wave branch, and hide the real run from
// `status`. An issue that exists but is closed or unreadable is left to
// the plan, which reports it.
func checkIssuesExist(ctx context.Context, be *backlogEnv, nums []int) error {
	var missing []string
	for _, n := range nums {
		_, err := be.src.Get(ctx, n)
		var bad forge.BadIssueFile
		switch {
		case errors.Is(err, forge.ErrNotFound):
			missing = append(missing, "#"+strconv.Itoa(n))
		case errors.As(err, &bad):
		case isTransient(err):
			// GitHub is down for now: the run waits it out as it starts,
			// and its plan reports an issue that turns out missing.
		case err != nil:
			return fmt.Errorf("backlog run: read issue #%d: %w", n, err)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	where := be.cfg.Backlog.LocalDir
	if be.src.Kind() == config.SourceGitHub {
		where = be.cfg.GitHub.Owner + "/" + be.cfg.GitHub.Repo + " on GitHub"
	}
	noun := "issue"
	if len(missing) > 1 {
		noun = "issues"
	}
	return usageError{fmt.Errorf("no %s %s in %s; nothing was claimed or started", noun, strings.Join(missing, ", "), where)}
}

// warnUnpushed says when the local base branch has commits origin lacks:
// the wave branch is cut from origin's base, so they are not in the run.
func warnUnpushed(ctx context.Context, be *backlogEnv, base string, w io.Writer) {
	if base == "" {
		var err error
		if base, err = be.src.DefaultBranch(ctx); err != nil {
			return
		}
	}
	n, err := be.git.Unpushed(ctx, base)
	if err != nil || n == 0 {
		return
	}
	fmt.Fprintf(w, "warning: %d commit(s) on your local %s are not on origin/%s: the wave branch is cut from origin/%s and leaves them out; push them first (git push origin %s) if the workers need them\n",
		n, base, base, base, base)
}

func isTransient(err error) bool {
	_, ok := forge.TransientCause(err)
	return ok
}
