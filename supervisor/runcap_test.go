package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// backlog.maxRunsPerIssue bounds an issue's worker runs of every kind:
// with rework rounds to spare, an issue whose verify never passes parks
// at its second run, its spend and its runs in the question, instead of
// burning a third.
func TestAnIssueParksAtMaxRunsPerIssueWithItsSpendAndHistory(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = baseConfig + "  reworkRounds: 5\n  maxRunsPerIssue: 2\n  verify: [sh, -c, \"echo NEVER-PASSES; exit 1\"]\n"
	f.issue(1, "Never passes", "Files: backlog-work/**")
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43\n%s", res.ExitCode, res.err, res.out)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateParked || is.Attempts != 2 || !strings.Contains(is.Detail, "backlog.maxRunsPerIssue (2)") {
		t.Fatalf("#1: %s after %d attempts (%q); want parked at the cap after 2 runs", is.State, is.Attempts, is.Detail)
	}
	id := filepath.Base(res.Dir)
	for _, want := range []string{"spent", id + " a1:", id + " a2:"} {
		if !strings.Contains(is.Question, want) {
			t.Errorf("the question lacks %q:\n%s", want, is.Question)
		}
	}
}

// doctor's cap check: a cap below the 95th percentile of what the lane's
// merged issues needed is named, one that covers them is not.
func TestACapBelowWhatPastIssuesNeededIsFound(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	dir := filepath.Join(runlog.Root(state), "20261201T090000Z-t-abc123")
	var evs []backlog.Event
	info := backlog.RunInfo{ID: filepath.Base(dir), StartedAt: time.Now()}
	evs = append(evs, backlog.Event{Kind: backlog.EvRunStarted, Run: &info})
	// Twenty merged issues: seventeen needed one run, three needed five.
	for n := 1; n <= 20; n++ {
		runs := 1
		if n >= 18 {
			runs = 5
		}
		for k := 1; k <= runs; k++ {
			rd := filepath.Join(dir, "runs", "i"+itoa(n)+"-a"+itoa(k))
			code := 1
			if err := jsonfile.Write(filepath.Join(rd, "runtime.json"), runtime.Record{TerminalDisposition: runtime.Failed, ExitCode: &code}); err != nil {
				t.Fatal(err)
			}
		}
		evs = append(evs, backlog.Event{Kind: backlog.EvMerged, Issue: n})
	}
	// A run stopped by a usage limit is no need.
	lim := filepath.Join(dir, "runs", "i1-a2")
	if err := jsonfile.Write(filepath.Join(lim, "runtime.json"), runtime.Record{TerminalDisposition: runtime.Failed, UsageLimit: &runtime.UsageLimit{Line: "You've hit your session limit"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if err := jsonfile.Append(filepath.Join(dir, runlog.EventsFile), ev); err != nil {
			t.Fatal(err)
		}
	}
	if got := CapFindings(state, config.Backlog{MaxRunsPerIssue: 8}); len(got) != 0 {
		t.Errorf("a cap of 8 is named: %q", got)
	}
	got := CapFindings(state, config.Backlog{MaxRunsPerIssue: 1})
	if len(got) != 1 || !strings.Contains(got[0], "backlog.maxRunsPerIssue 1") || !strings.Contains(got[0], "over 20 issues") {
		t.Errorf("a cap of 1 against issues needing up to 5: %q", got)
	}
}
