package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// `backlog status` names every issue with its state and what a person
// acts on (the question, the conflicting files, the dropped issue, the
// wait for answers, the rework round), and hostile issue text reaches the
// terminal with no raw control character.
func TestBacklogStatusTextCarriesNoRawControlCharacters(t *testing.T) {
	v := runningBacklog()
	v.Issues[4].Title = "Asks \x1b[5mloudly\x1b[0m \u202eok"
	v.NeedsInput[0].Question = "$(touch x) \x1b[2J\u202eok?"
	v.Issues[5].Files = []string{"src/\x1b]0;owned\x07.ts"}
	v.Issues[1].Reworks, v.Issues[1].ReworkFrom = 1, "verify"
	v.Dropped[0].Detail = "held by \x1b[31mmallory\x1b[0m"
	until := clock.Add(5 * time.Minute)
	v.WaitingForAnswers = &backlog.AnswerWait{Since: clock, Until: &until, Issues: []int{23}}
	var b strings.Builder
	RenderBacklogStatus(&b, v)
	out := b.String()
	for _, want := range []string{"backlog run 20260314T120000Z-backlog (running)", "tally: merged 1 / in flight 3 / blocked 2 / needs-input 1 / waiting 1",
		"#27    parked", "conflicting files: src/", "#9     dropped     claimed", "waiting for answers to #23 since ", "1 rework round (verify)",
		"needs input:\n  #23"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	for _, c := range out {
		if (c < 0x20 && c != '\n') || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u202e' || c == '\u202d' {
			t.Fatalf("status carries the raw control character %U:\n%q", c, out)
		}
	}
}

// `backlog status` says when the run's workers are not sandboxed, and
// names each host the sandbox refused with the issues that tried it.
func TestBacklogStatusSaysWorkersAreUnsandboxedAndNamesBlockedHosts(t *testing.T) {
	v := runningBacklog()
	v.Sandbox = &backlog.SandboxState{Why: "backlog.sandbox.mode: off", Unconfined: "backlog.sandbox.mode: off"}
	v.BlockedHosts = []backlog.BlockedHost{{Host: "evil.example:443", Issues: []int{4, 23}}}
	var b strings.Builder
	RenderBacklogStatus(&b, v)
	out := b.String()
	for _, want := range []string{"sandbox: off (backlog.sandbox.mode: off): workers can read your home directory and reach any host",
		"blocked host: evil.example:443 (#4 #23)"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	v.Sandbox, v.BlockedHosts = &backlog.SandboxState{On: true}, nil
	b.Reset()
	RenderBacklogStatus(&b, v)
	if out := b.String(); strings.Contains(out, "sandbox") || strings.Contains(out, "blocked host") {
		t.Errorf("a sandboxed run with nothing refused says something about it:\n%s", out)
	}
}
