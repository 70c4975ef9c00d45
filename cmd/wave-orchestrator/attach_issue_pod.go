package main

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// podRecord is the record of issue is's latest run when that run is a
// pod's (the launcher's mirror wrote where it runs), else nil.
func podRecord(is *backlog.IssueRun) *runtime.Record {
	if is.RunDir == "" {
		return nil
	}
	rec, err := runtime.ReadRecord(filepath.Join(is.RunDir, lanes.RuntimeFile))
	if err != nil || rec.Kubernetes == nil {
		return nil
	}
	return rec
}

// attachIssuePod attaches to the pod of the worker on issue is, as
// `attach --agent` does to a wave agent's: the API's pods/attach, Ctrl-P
// Ctrl-Q to detach; its log (brought back from origin once the run
// ended) when there is no pod to attach to.
func attachIssuePod(ctx context.Context, e *laneEnv, is *backlog.IssueRun, rec *runtime.Record, stdout, stderr io.Writer) error {
	st := state.AgentFailed
	switch runtime.ObserveFiles(is.RunDir, time.Now()).Verdict.State {
	case runtime.StateRunning:
		st = state.AgentRunning
	case runtime.StateLaunching:
		st = state.AgentLaunching
	case runtime.StateCompleted:
		st = state.AgentCompleted
	}
	a := state.Agent{ID: "i" + strconv.Itoa(is.Number), State: st, Backend: state.BackendKubernetes,
		RunDir: is.RunDir, LogPath: filepath.Join(is.RunDir, lanes.LogFile)}
	return attachKube(ctx, e.lane, state.Wave{}, a, rec, stdout, stderr)
}
