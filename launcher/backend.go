package launcher

import (
	"context"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// outcome is the run's state as the launcher sees it, from the runtime's
// verdict.
func (l *Launcher) outcome(ctx context.Context, runDir string, now time.Time) Outcome {
	return outcomeOf(l.runs.Observe(ctx, runDir, now))
}

func outcomeOf(obs runtime.Observation) Outcome {
	v := obs.Verdict
	o := Outcome{Done: v.Done, State: string(v.State), ExitCode: v.ExitCode, Signal: v.Signal, Terminate: v.Terminate, Limit: v.UsageLimit}
	if obs.Record != nil {
		o.Executor = obs.Record.ExecutorID
	}
	var detail []string
	if v.UsageLimit != nil {
		detail = append(detail, "usage limit: "+v.UsageLimit.Line)
	}
	if v.Reason != "" {
		detail = append(detail, v.Reason)
	}
	detail = append(detail, v.Warnings...)
	if obs.Err != nil {
		detail = append(detail, obs.Err.Error())
	}
	o.Detail = strings.Join(detail, "; ")
	return o
}
