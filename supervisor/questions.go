package supervisor

import (
	"context"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
)

// selfLogin is a source that knows whose comments are the supervisor's.
type selfLogin interface {
	Self(ctx context.Context) (string, error)
}

// askedBefore is the question each issue was last left asking in this
// lane's backlog runs (their events), newest run last.
func askedBefore(stateDir string) map[int]string {
	out := map[int]string{}
	if stateDir == "" {
		return out
	}
	dirs, _ := runlog.List(stateDir)
	for _, d := range dirs {
		r, _, err := runlog.Read(d)
		if err != nil {
			continue // a corrupt run is reported by status; its questions are lost, nothing else
		}
		for _, is := range r.List() {
			if is.State == backlog.StateNeedsInput && is.Question != "" {
				out[is.Number] = is.Question
			}
		}
	}
	return out
}

// keepQuestions gives every needs-input issue of p the question it was
// asked: the issue list carries no comments, so the planner alone knows
// only the title. The question comes from this lane's earlier runs, else
// (asked from another clone) from the supervisor's own needs-input
// comment on the issue — never from anyone else's.
func keepQuestions(ctx context.Context, stateDir string, src forge.Source, p *backlog.Plan) {
	if len(p.NeedsInput) == 0 {
		return
	}
	asked := askedBefore(stateDir)
	if sl, ok := src.(selfLogin); ok {
		for _, q := range p.NeedsInput {
			if _, known := asked[q.Issue]; known {
				continue
			}
			login, err := sl.Self(ctx)
			if err != nil {
				break // the title stays; planning goes on
			}
			is, err := src.Get(ctx, q.Issue)
			if err != nil {
				continue
			}
			if own, ok := backlog.OwnQuestion(is.Comments, login); ok {
				asked[q.Issue] = own
			}
		}
	}
	p.KeepQuestions(asked)
}
