package supervisor

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// backlog.maxRunsPerIssue caps an issue's worker runs of every kind
// (first run, salvage, rework, answer, conflict, resume) across the
// lane's backlog runs, beside backlog.budget.perIssue's tokens and cost:
// an issue that keeps failing parks with its spend and history rather
// than burning without end. A run stopped by a usage limit is no spend
// and does not count.

// pastRun is one worker run of an issue in the lane's backlog runs.
type pastRun struct {
	backlogRun string // the backlog run's id
	attempt    int
	outcome    string // how it ended, in words
	limited    bool   // stopped by a usage limit: not counted
}

// workerRunsOf lists issue n's worker runs in every backlog run of the
// lane, oldest first.
func workerRunsOf(laneStateDir string, n int) []pastRun {
	dirs, _ := filepath.Glob(filepath.Join(runlog.Root(laneStateDir), "*", "runs", "i"+strconv.Itoa(n)+"-a*"))
	var out []pastRun
	for _, d := range dirs {
		k, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d), "i"+strconv.Itoa(n)+"-a"))
		if err != nil {
			continue
		}
		r := pastRun{backlogRun: filepath.Base(filepath.Dir(filepath.Dir(d))), attempt: k, outcome: "started"}
		if rec, err := runtime.ReadRecord(filepath.Join(d, lanes.RuntimeFile)); err == nil {
			r.limited = rec.UsageLimit != nil
			r.outcome = firstNonEmpty(rec.ExitReason, rec.TerminalDisposition)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b pastRun) int {
		if c := strings.Compare(a.backlogRun, b.backlogRun); c != 0 {
			return c
		}
		return a.attempt - b.attempt
	})
	return out
}

// counted is how many of runs count against the cap.
func counted(runs []pastRun) int {
	n := 0
	for _, r := range runs {
		if !r.limited {
			n++
		}
	}
	return n
}

// overRuns parks j's issue instead of starting its next worker once its
// runs reached backlog.maxRunsPerIssue; it reports whether it did.
func (s *Supervisor) overRuns(ctx context.Context, j *job) (bool, error) {
	n := j.w.n
	limit := s.o.Config.Backlog.MaxRunsPerIssue
	if limit <= 0 {
		return false, nil
	}
	runs := workerRunsOf(s.o.Layout.StateDir, n)
	if counted(runs) < limit {
		return false, nil
	}
	spent := spend.ByIssue(spend.LaneRuns(s.o.Layout))[n]
	var hist []string
	for _, r := range runs {
		h := fmt.Sprintf("%s a%d: %s", r.backlogRun, r.attempt, oneLine(r.outcome))
		if r.limited {
			h += " (not counted)"
		}
		hist = append(hist, h)
	}
	q := fmt.Sprintf("#%d used its %d worker runs (backlog.maxRunsPerIssue) without merging and spent %s. Its runs:\n- %s\n"+
		"Raise the cap, narrow or split the issue, or say what the worker is missing?", n, limit, spent.String(), strings.Join(hist, "\n- "))
	return true, s.park(ctx, j, fmt.Sprintf("not started: backlog.maxRunsPerIssue (%d) reached after %d worker runs, %s spent",
		limit, counted(runs), spent.String()), q, nil)
}

// CapFindings compares backlog.maxRunsPerIssue and backlog.budget.perIssue
// with what the lane's past issues needed to merge: one line for each cap
// below the 95th percentile of those needs (a cap that would have parked
// more than one merged issue in twenty). Nothing without merged issues.
func CapFindings(laneStateDir string, b config.Backlog) []string {
	dirs, _ := runlog.List(laneStateDir)
	var runs []float64
	needs := map[int]usage.Usage{}
	for _, d := range dirs {
		r, _, err := runlog.Read(d)
		if err != nil {
			continue
		}
		spent := spend.ByIssue(spend.BacklogRuns("", d))
		for _, is := range r.List() {
			if is.State != backlog.StateMerged {
				continue
			}
			runs = append(runs, float64(counted(workerRunsOf(laneStateDir, is.Number))))
			if u, ok := spent[is.Number]; ok {
				needs[is.Number] = u
			}
		}
	}
	if len(runs) == 0 {
		return nil
	}
	var out []string
	if p := p95(runs); b.MaxRunsPerIssue > 0 && float64(b.MaxRunsPerIssue) < p {
		out = append(out, fmt.Sprintf("backlog.maxRunsPerIssue %d is below what this lane's merged issues needed: 95th percentile %g worker runs over %d issues",
			b.MaxRunsPerIssue, p, len(runs)))
	}
	var tokens, costs []float64
	for _, u := range needs {
		tokens, costs = append(tokens, float64(u.Tokens())), append(costs, u.Cost())
	}
	if c := b.Budget.PerIssue.Tokens; c != nil && len(tokens) > 0 && float64(*c) < p95(tokens) {
		out = append(out, fmt.Sprintf("backlog.budget.perIssue.tokens %d is below what this lane's merged issues needed: 95th percentile %.0f tokens over %d issues",
			*c, p95(tokens), len(tokens)))
	}
	if c := b.Budget.PerIssue.CostUSD; c != nil && len(costs) > 0 && *c < p95(costs) {
		out = append(out, fmt.Sprintf("backlog.budget.perIssue.costUsd %g is below what this lane's merged issues needed: 95th percentile $%.2f over %d issues",
			*c, p95(costs), len(costs)))
	}
	return out
}

// p95 is the 95th percentile of vs (nearest rank).
func p95(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	i := int(math.Ceil(0.95*float64(len(s)))) - 1
	return s[max(i, 0)]
}
