package gate

import (
	"testing"
	"testing/fstest"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// A cont-QA report left by an earlier run does not pass this run's gate.
func TestStaleReportDoesNotCount(t *testing.T) {
	a := wave.Agent{ID: "A0", OwnedPaths: []string{"docs/reviews/wave-0-cont-qa.md"}}
	w := &wave.Wave{Agents: []wave.Agent{a}}
	b := roles.Bind(w, config.Roles{})
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	zero := 0
	log := "[wave-verdict] pass\n[wave-gate] architecture=pass integration=pass durability=pass live=pass docs=pass\n"
	for _, tc := range []struct {
		name    string
		modTime time.Time
		ok      bool
	}{
		{"written by this run", start.Add(5 * time.Second), true},
		{"left by an earlier run", start.Add(-time.Hour), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"docs/reviews/wave-0-cont-qa.md": {Data: []byte("Verdict: PASS\n"), ModTime: tc.modTime}}
			s := Summarize(SummaryInput{Agent: &a, Bindings: b, Log: log, ExitCode: &zero, FS: fsys, StartedAt: start})
			f := Stage(roles.PhaseContQa, w, b, map[string]Summary{"A0": s}, &config.Lane{})
			if ok := len(f) == 0; ok != tc.ok {
				t.Fatalf("gate ok = %v, want %v (%v)", ok, tc.ok, f)
			}
			if !tc.ok && (f[0].StatusCode != "missing-cont-qa-report" || !s.ReportStale) {
				t.Fatalf("failure %+v, stale %v", f[0], s.ReportStale)
			}
		})
	}
}
