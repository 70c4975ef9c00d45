package main

import (
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// A question asked while the wave runs shows on the dashboard; a, the
// answer and Enter, typed through tmux as a person would, answer it in
// the wave's coordination log.
func TestDashboardAnswerKeyAnswersAQuestion(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 60s"), implAgent("A2")}, closureAgents()...)...)
	bg := r.start(ctxFor(t), "launch", "--lane", "main")
	r.stopA1AtEnd(t, bg)
	waitFor(t, "A1 to run", 30*time.Second, func() bool { return r.disposition("A1", 1) == "running" })
	q, err := questions.Post(r.layout(), questions.Ask{Wave: 0, AgentID: "A1", Attempt: 1, Text: "Which endpoint, v1 or v2?"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the dashboard to list the question", 30*time.Second, func() bool {
		s := r.capture(lanes.DashboardSession)
		return strings.Contains(s, "Questions waiting for you (1)") && strings.Contains(s, q.ID)
	})
	r.keys(t, "a")
	waitFor(t, "the answer line", 30*time.Second, func() bool {
		return strings.Contains(r.capture(lanes.DashboardSession), "answer "+q.ID+": █")
	})
	r.keys(t, "-l", "v2, the v1 one is going away")
	r.keys(t, "Enter")
	waitFor(t, "the answer in the coordination log", 30*time.Second, func() bool {
		qs, _, err := questions.List(r.layout())
		return err == nil && len(qs) == 1 && qs[0].State == questions.Answered
	})
	qs, _, _ := questions.List(r.layout())
	if qs[0].Answer != "v2, the v1 one is going away" {
		t.Fatalf("answered %q", qs[0].Answer)
	}
	waitFor(t, "the dashboard to say it answered", 30*time.Second, func() bool {
		s := r.capture(lanes.DashboardSession)
		return strings.Contains(s, "answered "+q.ID) && !strings.Contains(s, "Questions waiting for you")
	})
}
