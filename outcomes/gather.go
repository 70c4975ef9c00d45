package outcomes

import (
	"context"
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
)

// Gather reads every backlog run of the lane and marks the merged issues
// whose merge the base branch's history reverted (origin's copy as last
// fetched, else the local branch; nothing is fetched). Problems are what
// could not be read, in words; what could is still counted.
func Gather(ctx context.Context, l lanes.Layout, repoRoot string) (issues []Issue, problems []string) {
	dirs, err := runlog.List(l.StateDir)
	if err != nil {
		return nil, []string{err.Error()}
	}
	for _, d := range dirs {
		evs, bad, err := runlog.Events(d)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		for _, b := range bad {
			problems = append(problems, "skipped a corrupt event line at "+b)
		}
		issues = append(issues, FromRun(filepath.Base(d), evs, spend.BacklogRuns(l.Lane, d))...)
	}
	byBase := map[string][]string{}
	for _, is := range issues {
		if is.MergeCommit != "" && is.Base != "" {
			byBase[is.Base] = append(byBase[is.Base], is.MergeCommit)
		}
	}
	for base, commits := range byBase {
		reverted, err := revertedOn(ctx, repoRoot, base, commits)
		if err != nil {
			problems = append(problems, "reverts on "+base+": "+err.Error())
			continue
		}
		for i := range issues {
			if r := reverted[issues[i].MergeCommit]; r != "" && issues[i].Base == base {
				issues[i].RevertedBy = r
			}
		}
	}
	return issues, problems
}

// revertedOn looks on origin's base branch, else the local one.
func revertedOn(ctx context.Context, dir, base string, commits []string) (map[string]string, error) {
	got, err := gitops.Reverted(ctx, dir, "refs/remotes/origin/"+base, commits)
	if err != nil || got != nil {
		return got, err
	}
	return gitops.Reverted(ctx, dir, "refs/heads/"+base, commits)
}
