package supervisor

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// TestWorkerDeadlineComesFromTheRealClock: the deadline in a worker's
// launch.json is read by the runner, another process on the real clock,
// so it is counted from the real clock even when the run's own clock
// (Options.Now) is elsewhere; a deadline from a test's clock two days
// back would have the runner stop the worker at once.
func TestWorkerDeadlineComesFromTheRealClock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	gate := filepath.Join(t.TempDir(), "go")
	f.issue(1, "Waits", "Files: a/**\n\nlocal-agent: wait="+gate)
	run := f.startRun(t, func(o *Options) {
		o.Now = func() time.Time { return time.Now().Add(-48 * time.Hour) }
	}, 1)
	run.until(t, f, "the worker to start", kind(backlog.EvWorkerStarted))
	evs, _, err := readEvents(run.dir())
	if err != nil {
		t.Fatal(err)
	}
	var runDir string
	for _, ev := range evs {
		if ev.Kind == backlog.EvWorkerStarted {
			runDir = ev.RunDir
		}
	}
	var p *runtime.Payload
	// worker_started may be recorded before the launch file is on disk.
	waitFor(t, "the worker's launch.json", func() bool {
		p, err = runtime.ReadPayload(filepath.Join(runDir, lanes.LaunchFile))
		return err == nil
	})
	if p.DeadlineAt == nil || !p.DeadlineAt.After(time.Now()) {
		t.Errorf("launch.json deadline %v is not ahead of the real clock", p.DeadlineAt)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if res := run.end(t); res.err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
}
