package supervisor

import (
	"context"
	"github.com/wave-orchestrator/wave-orchestrator/outcomes"
)

// outcomesLine is the lane's outcome ledger in one line for the final
// pull request's footer: every backlog run of the lane read from disk,
// this one included, reverts looked up in the base branch's history as
// last fetched. What cannot be read is left out, never an error.
func (s *Supervisor) outcomesLine(ctx context.Context) string {
	issues, _ := outcomes.Gather(ctx, s.o.Layout, s.o.Lane.RepoRoot)
	_, total, err := outcomes.Build(issues, "")
	if err != nil || total.Taken == 0 {
		return ""
	}
	return outcomes.Line(total)
}
