package wavemode

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	"github.com/wave-orchestrator/wave-orchestrator/gate"
)

// An agent prints its markers with `signal` instead of writing them by
// hand: each line is one the gates accept, and a bad value is refused.
func TestSignalPrintsMarkersTheGatesAccept(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	for _, tc := range []struct {
		args []string
		want string
		ok   func(gate.Signals) bool
	}{
		{[]string{"proof", "--completion", "integrated", "--durability", "durable", "--proof", "integration", "--state", "met"},
			"[wave-proof] completion=integrated durability=durable proof=integration state=met",
			func(s gate.Signals) bool { return s.Proof != nil && s.Proof.Proof == "integration" }},
		{[]string{"doc-delta", "--state", "shared-plan", "--paths", "docs/x.md"}, "[wave-doc-delta] state=shared-plan paths=docs/x.md",
			func(s gate.Signals) bool { return s.DocDelta != nil }},
		{[]string{"component", "--component", "ledger", "--level", "baseline-proved", "--state", "met"}, "[wave-component] component=ledger level=baseline-proved state=met",
			func(s gate.Signals) bool { _, ok := s.Components["ledger"]; return ok }},
		{[]string{"integration", "--state", "needs-more-work", "--claims", "1", "--conflicts", "2", "--blockers", "0", "--detail", "two owners of api.go"},
			"[wave-integration] state=needs-more-work claims=1 conflicts=2 blockers=0 detail=two owners of api.go",
			func(s gate.Signals) bool { return s.Integration != nil }},
		{[]string{"doc-closure", "--state", "delta", "--paths", "README.md"}, "[wave-doc-closure] state=delta paths=README.md",
			func(s gate.Signals) bool { return s.DocClosure != nil }},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			res := r.Run(e2etest.Context(t), append([]string{"signal"}, tc.args...)...)
			got := strings.TrimSpace(res.Stdout)
			if res.Code != 0 || got != tc.want || len(e2etest.Lines(res.Stdout)) != 1 {
				t.Fatalf("exit %d, got %q, want %q\n%s", res.Code, got, tc.want, res.Stderr)
			}
			if !tc.ok(gate.ParseLog("agent output\n" + got + "\n")) {
				t.Fatalf("the gates do not read %q", got)
			}
		})
	}
	for _, bad := range [][]string{
		{"proof", "--completion", "contract", "--state", "met"},
		{"doc-closure", "--state", "finished"},
		{"integration", "--state", "ready-for-doc-closure", "--claims", "-1", "--conflicts", "0", "--blockers", "0"},
	} {
		res := r.Run(e2etest.Context(t), append([]string{"signal"}, bad...)...)
		if res.Code != e2etest.ExitUsage || res.Stdout != "" || !strings.Contains(res.Stderr, "the gates would reject") {
			t.Errorf("signal %v: exit %d stdout %q stderr %q; want a usage error and no marker", bad, res.Code, res.Stdout, res.Stderr)
		}
	}
}
