package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Runs that could not be started: a session that never came up, or an
// executor the runner could not start.

// errStartFailed marks a wave that ended because runs could not be started.
var errStartFailed = errors.New("runs could not be started")

// startFailed closes every run this start touched, so nothing is left
// `launching` in the state and no agent runs on without a launcher: runs
// whose session never came up are recorded as failed with the reason, the
// others (earlier batches, or sessions of the batch that did come up) are
// terminated.
func (r *waveRun) startFailed(ctx context.Context, attempt int, ps []*runtime.Payload, err error) error {
	notStarted := map[string]bool{}
	reason := err
	var se *runtime.StartError
	if errors.As(err, &se) {
		reason = se.Err
		for _, d := range se.NotStarted {
			notStarted[d] = true
		}
	}
	grace := time.Duration(r.l.opt.Lane.Runtime.TerminateGraceMs) * time.Millisecond
	cctx := context.WithoutCancel(ctx)
	for _, p := range ps {
		o := Outcome{Done: true, State: state.AgentFailed, Detail: "session did not start: " + reason.Error()}
		if !notStarted[p.RunDir] {
			_ = r.l.runs.Terminate(cctx, p.RunDir, grace, r.l.opt.KeepSessions)
			o = r.l.outcome(cctx, p.RunDir, r.l.now())
			if !o.Done {
				o = Outcome{Done: true, State: state.AgentTerminated}
			}
			o.Detail = strings.TrimPrefix(o.Detail+"; stopped because another run of the wave could not start", "; ")
		}
		r.finalize(p.AgentID, p.RunDir, attempt, o)
	}
	return fmt.Errorf("wave %d: %w: %w", r.n, errStartFailed, err)
}

// noExecutor reports whether a run failed because its executor could not
// be started — the runner could not exec it, or it exited 127 (command
// not found) or 126 (not executable), the shell's codes for that — and
// the real reason: the runner's, else the last line the agent printed.
func (r *waveRun) noExecutor(id string, res *agentResult) (string, bool) {
	o := res.Outcome
	if o.ExitCode == nil || *o.ExitCode != exitcode.NotExecutable && *o.ExitCode != exitcode.NotFound || o.Signal != "" {
		return "", false
	}
	reason := o.Detail
	if !strings.HasPrefix(reason, "start failed") {
		if line := lastLogLine(res.Summary.LogPath); line != "" {
			reason = line
		}
	}
	ex := r.p.Agents[id].Resolved.ID
	return fmt.Sprintf("executor %s could not be started (exit %d): %s", ex, *o.ExitCode, reason), true
}

// lastLogLine is the last non-blank line an agent printed (ANSI and the
// runner's own [wave] lines left out), for a failure's reason.
func lastLogLine(path string) string {
	text, err := runtime.ReadLogTail(path, 8<<10)
	if err != nil && text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(termtext.Line(lines[i])) // never print agent output raw
		if l == "" || strings.HasPrefix(l, "[wave]") {
			continue
		}
		if r := []rune(l); len(r) > 200 {
			l = string(r[:200]) + "…"
		}
		return l
	}
	return ""
}
