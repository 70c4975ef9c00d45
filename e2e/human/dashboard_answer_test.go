package human

import (
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// The human loop through the dashboard: A1's blocking question shows in
// the wave view; a, the answer and Enter, typed through tmux as a person
// would, answer it, and the live launcher relaunches A1 with the answer
// in its prompt and exits 0.
func TestDashboardAnswerKeyAnswersAQuestion(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	e2etest.AskingWave(r)
	bg := r.Start(e2etest.Context(t), "launch", "--lane", "main")
	var q questions.Question
	e2etest.WaitFor(t, "A1's question", time.Minute, func() bool {
		qs, _, err := questions.List(r.Layout())
		if err != nil || len(qs) != 1 {
			return false
		}
		q = qs[0]
		return true
	})
	e2etest.WaitFor(t, "the dashboard to list the question", 30*time.Second, func() bool {
		s := r.Capture(lanes.DashboardSession)
		return strings.Contains(s, "Questions waiting for you (1)") && strings.Contains(s, q.ID)
	})
	r.Keys(t, "a")
	e2etest.WaitFor(t, "the answer line", 30*time.Second, func() bool {
		return strings.Contains(r.Capture(lanes.DashboardSession), "answer "+q.ID+": █")
	})
	answer := "Postgres; q and ? are text here"
	r.Keys(t, "-l", answer)
	r.Keys(t, "Enter")
	if res := bg.Wait(t, "launch after the answer", 2*time.Minute); res.Code != 0 {
		t.Fatalf("launch exit %d after the answer from the dashboard:\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	e2etest.CheckAnswerReachedA1(t, r, q, answer)
	e2etest.WaitFor(t, "the dashboard to show the wave completed", 30*time.Second, func() bool {
		s := r.Capture(lanes.DashboardSession)
		return strings.Contains(s, "■ wave 0 completed") && !strings.Contains(s, "Questions waiting for you")
	})
}
