package launcher

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Status is the one loader of a lane's wave state, behind `status`,
// `status --json`, the dashboard, `attach` and `stop` (as
// supervisor.Status is for a backlog run): state.Load with the runtime as
// observer and the coordination log as blocker source, the lane's
// questions and spend laid over it.
func Status(ctx context.Context, layout lanes.Layout) (state.Lane, error) {
	backend := runs.NewReader(layout)
	now := time.Now()
	var mu sync.Mutex
	seen := map[string]state.RunFacts{} // for the spend: each record read once
	observe := func(runDir string) state.RunFacts {
		octx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		obs, _ := backend.Observe(octx, runDir, now)
		f := runFacts(obs)
		mu.Lock()
		seen[runDir] = f
		mu.Unlock()
		return f
	}
	blockers := func(n int) []state.Blocker {
		recs, _, _ := coord.Read(layout.CoordinationPath(n))
		var out []state.Blocker
		for _, r := range coord.Open(recs) {
			out = append(out, state.Blocker{ID: r.ID, Kind: r.Kind, AgentID: r.AgentID, Summary: r.Summary})
		}
		return out
	}
	// One read of the lane's log serves the reduction, the questions and
	// the spend.
	evs, bad, err := state.ReadEvents(layout.EventsPath())
	if err != nil {
		return state.Load(layout, observe, blockers, now) // says why, as always
	}
	fold := state.FoldEvents(evs)
	l, err := state.LoadFold(layout, fold, bad, observe, blockers, now)
	if err == nil {
		questions.OverlayUnanswered(&l, layout, fold.UnansweredIDs())
		l.ApplyUsage(waveSpend(layout, fold.LoggedRuns(), seen))
	}
	return l, err
}

// waveSpend is every wave run's spend (package spend), for status.
func waveSpend(layout lanes.Layout, logged []state.LoggedRun, seen map[string]state.RunFacts) []state.RunSpend {
	var out []state.RunSpend
	for _, r := range spend.WaveRunsFrom(layout, logged, seen) {
		if r.Wave != nil {
			out = append(out, state.RunSpend{Wave: *r.Wave, Agent: r.Agent, Usage: r.Usage})
		}
	}
	return out
}

// runFacts converts a runtime observation into the reducer's input.
func runFacts(obs runtime.Observation) state.RunFacts {
	f := state.RunFacts{RunDir: obs.RunDir}
	if rec := obs.Record; rec != nil {
		f.Disposition = rec.TerminalDisposition
		f.ExitCode, f.Signal = rec.ExitCode, rec.Signal
		started, hb := rec.StartedAt, rec.LastHeartbeatAt
		f.StartedAt, f.LastHeartbeatAt, f.FinishedAt = &started, &hb, rec.FinishedAt
		f.LastOutputAt = rec.LastOutputAt
		f.AgentID, f.Executor, f.Usage = rec.AgentID, rec.ExecutorID, rec.Usage
		if rec.SessionBackend == runtime.BackendKubernetes {
			f.Backend = state.BackendKubernetes
			if k := rec.Kubernetes; k != nil && k.Pod != "" {
				f.Pod = k.Namespace + "/" + k.Pod
			}
		}
	}
	switch obs.Verdict.State {
	case runtime.StateLost:
		f.Lost = obs.Verdict.Done
		f.Reason = obs.Verdict.Reason
	case runtime.StateStalled, runtime.StateBudgetExceeded, runtime.StateUsageLimited:
		f.Disposition = string(obs.Verdict.State)
	case runtime.StateRunning:
		f.Warnings = obs.Verdict.Warnings
	case runtime.StateCompleted, runtime.StateFailed, runtime.StateTerminated:
		if f.Disposition == "" || f.Disposition == runtime.Running || f.Disposition == runtime.Launching {
			f.Disposition = string(obs.Verdict.State)
			f.ExitCode, f.Signal = obs.Verdict.ExitCode, obs.Verdict.Signal
		}
	}
	if obs.Err != nil {
		f.Err = obs.Err.Error()
	}
	f.LastMarker = lastMarker(filepath.Join(obs.RunDir, lanes.LogFile))
	return f
}

// lastMarker is the last [wave-phase] line of a log tail, else its last
// non-blank line: what the agent is doing now.
func lastMarker(path string) string {
	b, err := runtime.ReadLogTail(path, 8<<10) // across a rotation too
	if err != nil {
		return ""
	}
	lines := strings.Split(gate.StripANSI(b), "\n")
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		s := strings.TrimSpace(strings.ReplaceAll(lines[i], "\r", ""))
		if s == "" {
			continue
		}
		if strings.HasPrefix(s, "[wave-phase]") {
			return s
		}
		if last == "" {
			last = s
		}
	}
	if r := []rune(last); len(r) > 200 {
		last = string(r[:200]) // by runes: a cut rune is no UTF-8 in status --json
	}
	return last
}

// RequestStop asks the live launcher of the lane to stop at its next look
// (as supervisor.RequestStop asks a backlog run): it ends its wave as
// stopped. The launcher that starts next removes the request.
func RequestStop(layout lanes.Layout) error {
	return jsonfile.Write(layout.ControlPath(), map[string]any{"stop": true, "requestedAt": time.Now().UTC()})
}
