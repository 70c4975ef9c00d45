package supervisor

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// PreviewOptions are `backlog plan`'s inputs.
type PreviewOptions struct {
	Config *config.Config
	Source forge.Source
	Git    *gitops.Repo
	Issues []int
	Width  int
	Labels []string
	// StateDir is the lane's state dir: its earlier runs' questions are
	// shown for needs-input issues ("" = none read).
	StateDir string
}

// PlanView is `backlog plan`'s output: the plan and each planned issue's title.
type PlanView struct {
	backlog.Plan
	Titles   map[int]string `json:"titles"`
	Calls    int64          `json:"apiCalls"`
	Warnings []string       `json:"warnings"` // e.g. unreadable issue files, skipped
}

// Preview plans without changing anything anywhere: it reads issues and
// the claim refs on origin, nothing more.
func Preview(ctx context.Context, o PreviewOptions) (PlanView, error) {
	width := o.Width
	if width <= 0 {
		width = o.Config.Backlog.Width
	}
	labels := o.Labels
	if len(labels) == 0 {
		labels = o.Config.Backlog.Labels
	}
	var warnings []string
	issues, err := listOpen(ctx, o.Source, labels, func(w string) { warnings = append(warnings, w) })
	if err != nil {
		return PlanView{}, err
	}
	have := map[int]bool{}
	for _, is := range issues {
		have[is.Number] = true
	}
	for _, n := range o.Issues {
		if !have[n] {
			if is, err := o.Source.Get(ctx, n); err == nil {
				issues = append(issues, is)
			}
		}
	}
	opts := backlog.PlanOptions{Issues: o.Issues, Width: width, Labels: labels, NeedsInputLabel: o.Config.Backlog.NeedsInputLabel,
		UndeclaredParallel: o.Config.Backlog.UndeclaredSurface == "parallel", MaxIssues: o.Config.Backlog.MaxIssues,
		Claimed: map[int]string{}}
	claims, err := o.Git.ListClaims(ctx)
	if err != nil {
		warnings = append(warnings, oneLine(err.Error()))
	}
	for _, c := range claims {
		opts.Claimed[c.Issue] = fmt.Sprintf("run %s on %s", c.RunID, c.Host)
	}
	p := backlog.MakePlan(issues, opts)
	keepQuestions(ctx, o.StateDir, o.Source, &p)
	v := PlanView{Plan: p, Titles: map[int]string{}, Calls: o.Source.Calls(), Warnings: append([]string{}, warnings...)}
	for _, is := range issues {
		v.Titles[is.Number] = backlog.Clean(is.Title)
	}
	return v, nil
}

// RequestStop asks the supervisor of the run in dir to stop at its next
// look (it checks every sweep); finish asks it to end the run there
// (merge what is ready, park the rest, open the final PR) instead of
// leaving it open to resume.
func RequestStop(dir string, finish bool) error {
	return jsonfile.Write(filepath.Join(dir, runlog.ControlFile), map[string]any{"stop": true, "finish": finish,
		"requestedAt": time.Now().UTC(), "pid": os.Getpid()})
}

// Close closes the merged issues of a finished run once its final PR is
// merged: on GitHub the PR must show merged; for the local source (or a
// PR not found) the wave branch must be an ancestor of origin/<base>.
// Claims are released after each close. It returns how many it closed.
func Close(ctx context.Context, dir string, src forge.Source, git *gitops.Repo, cfg *config.Config, out io.Writer) (int, error) {
	r, _, err := runlog.Read(dir)
	if err != nil {
		return 0, err
	}
	if !r.Finished {
		return 0, fmt.Errorf("backlog run %s has not finished; `backlog run` first", r.Info.ID)
	}
	merged, err := finalMerged(ctx, r, src, git)
	if err != nil {
		return 0, err
	}
	if !merged {
		return 0, fmt.Errorf("the final PR %s → %s is not merged yet; close after it merges", r.Info.WaveBranch, r.Info.Base)
	}
	closed := 0
	for _, is := range r.List() {
		if is.State != backlog.StateMerged {
			continue
		}
		if err := src.CloseIssue(ctx, is.Number); err != nil {
			return closed, fmt.Errorf("close #%d: %w", is.Number, err)
		}
		if c, ok, err := git.ReadClaim(ctx, is.Number); err == nil && ok && c.RunID == r.Info.ID {
			if err := git.Release(ctx, is.Number, c.SHA); err != nil {
				fmt.Fprintf(out, "warning: release the claim of #%d: %v\n", is.Number, err)
			}
		}
		if err := src.RemoveLabel(ctx, is.Number, cfg.Backlog.ClaimLabel); err != nil {
			fmt.Fprintf(out, "warning: remove the claim label of #%d: %v\n", is.Number, err)
		}
		fmt.Fprintf(out, "closed #%s\n", strconv.Itoa(is.Number))
		closed++
	}
	return closed, nil
}

func finalMerged(ctx context.Context, r *backlog.Run, src forge.Source, git *gitops.Repo) (bool, error) {
	if pr, err := src.FindPR(ctx, r.Info.WaveBranch, r.Info.Base); err == nil && pr != nil && pr.Merged {
		return true, nil
	}
	if err := git.Fetch(ctx); err != nil {
		return false, err
	}
	wave, ok, err := git.RemoteHead(ctx, r.Info.WaveBranch)
	if err != nil || !ok {
		return false, err
	}
	return git.IsAncestor(ctx, wave, "refs/remotes/origin/"+r.Info.Base)
}
