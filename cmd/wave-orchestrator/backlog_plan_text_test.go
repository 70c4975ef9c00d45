package main

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
)

// `backlog plan` prints issue titles, label names, questions and skip
// details, all written by whoever may open or label an issue: none of
// them reaches the terminal able to move the cursor, recolour it or show
// a line in another order than it holds.
func TestBacklogPlanNeverPrintsAnIssueTitleOrLabelRaw(t *testing.T) {
	p := supervisor.PlanView{
		Plan: backlog.Plan{
			Width: 1,
			Groups: []backlog.Group{{Issues: []int{3},
				Surface: backlog.Surface{Globs: []string{"src/**"}, Areas: []string{"api\x1b[2j", "ui\u202ebad"}}}},
			NeedsInput: []backlog.Question{{Issue: 4, Question: "which\x1b]0;owned\x07 one?\u2066"}},
			Skipped:    []backlog.Skip{{Issue: 5, Reason: backlog.ReasonMissing, Detail: "gone\r\x1b[1Aover\u200b"}},
		},
		Titles: map[int]string{3: "Fix \x1b[31mlogin\x1b[0m\u202etxt.exe"},
	}
	var b strings.Builder
	printPlan(&b, p)
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if termtext.HasControl(line) {
			t.Errorf("plan line %q holds a character a terminal acts on", line)
		}
	}
	for _, want := range []string{`#3 Fix login\u202etxt.exe`, `api`, `ui\u202ebad`, `which one?\u2066`, `gone over\u200b`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("plan %q does not show %q", b.String(), want)
		}
	}
}
