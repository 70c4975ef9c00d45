// Package spend gathers what a lane's runs spent from their durable
// records, for `status`, `backlog status`, the final PR body, budgets and
// the `usage` command. A run directory counts once, whatever happened to
// it: a retry or a salvage relaunch is a new directory (counted on its
// own), an adopted run is the same directory (counted once). Its figure
// is the runtime record's usage, the high-water mark its runner kept
// (every heartbeat, then the final figure), so a launcher killed with
// kill -9 changes nothing; a directory pruned since is counted from the
// usage its finished event carried.
package spend

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// Run is one run directory's spend.
type Run struct {
	Kind       string       `json:"kind"` // KindWave or KindBacklog
	Lane       string       `json:"lane"`
	Wave       *int         `json:"wave,omitempty"`
	Agent      string       `json:"agentId"`
	Issue      *int         `json:"issue,omitempty"`
	BacklogRun string       `json:"backlogRun,omitempty"`
	Review     bool         `json:"review,omitempty"`
	Attempt    int          `json:"attempt"`
	Executor   string       `json:"executor"`
	RunDir     string       `json:"runDir"`
	StartedAt  *time.Time   `json:"startedAt"`
	Usage      *usage.Usage `json:"usage"`
	// Outcome is the runtime record's terminal disposition (completed,
	// failed, terminated), "running" while it has none, "" when the
	// record is gone.
	Outcome string `json:"outcome,omitempty"`
}

// Kinds of run.
const (
	KindWave    = "wave"
	KindBacklog = "backlog"
)

// Model is the run's model as its usage named it, else "".
func (r Run) Model() string {
	if r.Usage != nil && r.Usage.Model != nil {
		return *r.Usage.Model
	}
	return ""
}

var waveRunDir = regexp.MustCompile(`^(.+)-a(\d+)$`)

// WaveRuns is every run of the lane's waves: the run directories on disk
// and those its event log names (pruned ones included).
func WaveRuns(l lanes.Layout) []Run {
	evs, _, _ := state.ReadEvents(l.EventsPath())
	return WaveRunsFrom(l, state.FoldEvents(evs).LoggedRuns(), nil)
}

// WaveRunsFrom is WaveRuns over the runs the lane's log names (already
// folded: state.Fold.LoggedRuns) and the runs already observed (known, by
// run directory; may be nil): a run whose facts came from its runtime
// record is not read again.
func WaveRunsFrom(l lanes.Layout, logged []state.LoggedRun, known map[string]state.RunFacts) []Run {
	seen := map[string]bool{}
	fromEvents := map[string]*usage.Usage{}
	var dirs []string
	for _, r := range logged {
		if !seen[r.RunDir] {
			seen[r.RunDir] = true
			dirs = append(dirs, r.RunDir)
		}
		if r.Usage != nil {
			fromEvents[r.RunDir] = r.Usage
		}
	}
	onDisk, _ := filepath.Glob(filepath.Join(l.StateDir, "waves", "*", "runs", "*"))
	for _, d := range onDisk {
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	var out []Run
	for _, d := range dirs {
		n, err := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(d))))
		m := waveRunDir.FindStringSubmatch(filepath.Base(d))
		if err != nil || m == nil {
			continue
		}
		k, _ := strconv.Atoi(m[2])
		r := Run{Kind: KindWave, Lane: l.Lane, Wave: &n, Agent: m[1], Attempt: k, RunDir: d}
		if f, ok := known[d]; ok && f.StartedAt != nil {
			// StartedAt is set only from a record that was read.
			r.Agent, r.Executor, r.Usage, r.StartedAt, r.Outcome = f.AgentID, f.Executor, f.Usage, f.StartedAt, f.Disposition
			if r.Outcome == "" {
				r.Outcome = "running"
			}
			out = append(out, r)
			continue
		}
		if !fill(&r) {
			if u, ok := fromEvents[d]; ok {
				r.Usage = u
			} else if _, err := os.Stat(d); err != nil {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// fill reads the run's records; false when its runtime record is gone.
func fill(r *Run) bool {
	rec, err := runtime.ReadRecord(filepath.Join(r.RunDir, lanes.RuntimeFile))
	if err != nil {
		if p, perr := runtime.ReadPayload(filepath.Join(r.RunDir, lanes.LaunchFile)); perr == nil {
			r.Executor, r.Agent = p.ExecutorID, p.AgentID
		}
		return false
	}
	r.Executor, r.Agent, r.Usage = rec.ExecutorID, rec.AgentID, rec.Usage
	r.Outcome = rec.TerminalDisposition
	if r.Outcome == "" {
		r.Outcome = "running"
	}
	if r.Attempt == 0 {
		r.Attempt = rec.Attempt
	}
	t := rec.StartedAt
	r.StartedAt = &t
	return true
}

var backlogRunDir = regexp.MustCompile(`^i(\d+)-([ar])(\d+)$`)

// BacklogRuns is every worker and reviewer run of one backlog run
// directory (.wave/lanes/<lane>/backlog/<run-id>).
func BacklogRuns(lane, dir string) []Run {
	var out []Run
	for _, sub := range []string{"runs", "reviews"} {
		ds, _ := filepath.Glob(filepath.Join(dir, sub, "i*"))
		for _, d := range ds {
			m := backlogRunDir.FindStringSubmatch(filepath.Base(d))
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			k, _ := strconv.Atoi(m[3])
			r := Run{Kind: KindBacklog, Lane: lane, Issue: &n, BacklogRun: filepath.Base(dir), Review: m[2] == "r", Attempt: k, RunDir: d}
			fill(&r)
			out = append(out, r)
		}
	}
	return out
}

// LaneRuns is every run of the lane: its waves' and its backlog runs'.
func LaneRuns(l lanes.Layout) []Run {
	out := WaveRuns(l)
	ds, _ := filepath.Glob(filepath.Join(l.StateDir, "backlog", "*"))
	for _, d := range ds {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, BacklogRuns(l.Lane, d)...)
		}
	}
	return out
}

// Total adds up runs.
func Total(runs []Run) usage.Usage {
	var t usage.Usage
	for _, r := range runs {
		if r.Usage != nil {
			t = usage.Add(t, *r.Usage)
		}
	}
	return t
}

// ByIssue sums runs per issue.
func ByIssue(runs []Run) map[int]usage.Usage {
	out := map[int]usage.Usage{}
	for _, r := range runs {
		if r.Issue != nil && r.Usage != nil {
			out[*r.Issue] = usage.Add(out[*r.Issue], *r.Usage)
		}
	}
	return out
}
