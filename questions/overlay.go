package questions

import (
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// OverlayUnanswered puts each wave's questions from its coordination log
// (the truth: an answer given while no launcher runs is in the log, not
// yet in the event log) into the lane state, given the questions the
// lane's event log records as unanswered (state.Fold.UnansweredIDs), and
// moves a running wave to waiting-for-input while a blocking one waits.
func OverlayUnanswered(l *state.Lane, layout lanes.Layout, un map[string]bool) {
	for i := range l.Waves {
		w := &l.Waves[i]
		qs, _, err := WaveQuestions(layout, w.Wave, un)
		if err != nil {
			continue // the blockers already report an unreadable log
		}
		out := make([]state.Question, 0, len(qs))
		for _, q := range qs {
			at := q.AskedAt
			out = append(out, state.Question{ID: q.ID, AgentID: q.AgentID, Attempt: q.Attempt, Text: q.Text,
				Blocking: q.Blocking, State: q.State, Answer: q.Answer, Operator: q.Operator, AskedAt: &at, AnsweredAt: q.AnsweredAt})
		}
		w.Questions = out
		w.SetWaiting()
	}
}
