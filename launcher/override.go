package launcher

import (
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/retry"
)

// takeOverride reads the wave's retry override. A command line that names
// what to rerun (--phase, --agent, --rerun-proven) wins and leaves it
// pending; an agent it names that the wave no longer has is an error.
func (r *waveRun) takeOverride() error {
	o, err := retry.ReadOverride(retry.OverridePath(r.l.opt.Layout.WaveDir(r.n)))
	if err != nil || o == nil {
		return err
	}
	opt := r.l.opt
	if opt.ResumePhase != "" || len(opt.RerunAgents) > 0 || opt.RerunProven {
		r.l.printf("wave %d: retry override pending (retry show --wave %d) but not used: the command line says what to rerun", r.n, r.n)
		return nil
	}
	if err := o.Check(r.p.Order); err != nil {
		return fmt.Errorf("wave %d: retry override: %w; `retry clear --wave %d` removes it", r.n, err, r.n)
	}
	r.override = o
	what := "phase " + o.ResumePhase
	if o.ResumePhase == "" {
		what = "the resume plan"
	}
	if len(o.SelectedAgentIDs) > 0 {
		what += " and agents " + strings.Join(o.SelectedAgentIDs, ", ")
	}
	r.l.printf("wave %d: following the retry override (%s, by %s)", r.n, termtext.Escape(what), termtext.Escape(orDash(o.RequestedBy)))
	return nil
}
