package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// A worker that keeps printing but changes nothing in its worktree is
// stopped as no-progress once backlog.noProgressSeconds pass, relaunched
// once told why, and, busy for nothing again, parked with a question;
// a worker that prints as much but keeps changing its files is left to
// work and merges.
func TestABusyWorkerThatChangesNothingIsStoppedSalvagedOnceThenParked(t *testing.T) {
	f := newFixture(t)
	f.config = strings.Replace(baseConfig, "  silenceSeconds: 30\n", "  silenceSeconds: 30\n  noProgressSeconds: 3\n", 1)
	f.issue(1, "Spins", "Files: a/**")
	f.issue(2, "Works slowly", "Files: b/**")
	f.shellWorkers(`set -e
n=$WAVE_ISSUE_NUMBER
if [ "$n" = 1 ]; then
  while :; do echo "thinking about #1 ..."; sleep 0.1; done
fi
i=0; while [ $i -lt 80 ]; do i=$((i+1)); echo "step $i" >> progress-$n.txt; echo "working, step $i"; sleep 0.1; done
gitc add progress-$n.txt && gitc commit -q -m "Work on #$n"
echo "[backlog-result] state=done detail=worked"
`)
	res := f.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("exit %d, %v; want 43 (#1 parked)\n%s", res.ExitCode, res.err, res.out)
	}
	r, _, _ := runlog.Read(res.Dir)
	one := r.Issues[1]
	if one.State != backlog.StateParked || one.Attempts != 2 || one.Question == "" || !strings.Contains(one.Detail, "no progress") {
		t.Fatalf("#1: %s after %d attempts (%q, question %q); want parked after one salvage, with a question", one.State, one.Attempts, one.Detail, one.Question)
	}
	if c := countEvents(f.events(res.Dir), backlog.EvWorkerFinished, backlog.OutcomeNoProgress); c != 2 {
		t.Errorf("%d no-progress stops, want 2", c)
	}
	prompt, _ := os.ReadFile(filepath.Join(res.Dir, "runs", "i1-a2", "prompt.md"))
	if !strings.Contains(string(prompt), "stopped by the supervisor: no progress") {
		t.Errorf("#1's relaunch is not told why it was stopped:\n%s", prompt)
	}
	if two := r.Issues[2]; two.State != backlog.StateMerged || two.Attempts != 1 {
		t.Errorf("#2: %s after %d attempts; want merged on its first, its files changing all along", two.State, two.Attempts)
	}
}

// Silence is timed from the runner's record of the agent's last output,
// across supervisor restarts: a worker that hangs silently is stopped as
// stalled though every supervisor is cut dead as soon as it has looked at
// the worker once (each restart used to start the clock again, so no
// supervisor lived long enough to see the silence), no sooner than the
// limit after its last output as the runner recorded it, then relaunched
// once.
func TestASilentWorkerIsStoppedThoughTheSupervisorKeepsRestarting(t *testing.T) {
	f := newFixture(t)
	f.config = strings.Replace(baseConfig, "silenceSeconds: 30", "silenceSeconds: 3", 1)
	f.issue(1, "Hangs once", "Files: a/**")
	f.shellWorkers(`set -e
if [ "$WAVE_ATTEMPT" = 1 ]; then echo "starting"; sleep 3600; fi
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
echo "[backlog-result] state=done detail=worked"
`)
	stall := func(dir string) *backlog.Event {
		if dir == "" {
			return nil
		}
		for _, ev := range f.events(dir) {
			if ev.Kind == backlog.EvWorkerFinished && ev.Outcome == backlog.OutcomeStalled {
				return &ev
			}
		}
		return nil
	}
	dir, lives := "", 0
	deadline := time.Now().Add(2 * time.Minute)
	for stall(dir) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the silent worker was never stopped in %d supervisor lives: each restart started its clock again", lives)
		}
		lives++
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		res := f.runCtx(ctx, func(o *Options) { o.Runs = &secondLookCut{Runs: o.Runs, issue: 1, cancel: cancel} }, 1)
		cancel()
		dir = res.Dir
		if res.err == nil && stall(dir) == nil {
			t.Fatalf("the run ended (exit %d) before #1 was stopped:\n%s", res.ExitCode, res.out)
		}
	}
	rec, err := runtime.ReadRecord(filepath.Join(dir, "runs", "i1-a1", lanes.RuntimeFile))
	if err != nil {
		t.Fatal(err)
	}
	if quiet := outputAt(runtime.Observation{Record: rec}); stall(dir).At.Sub(quiet) < 3*time.Second {
		t.Errorf("stopped as stalled at %s, %s after its last output (%s): before the 3s limit",
			stall(dir).At, stall(dir).At.Sub(quiet), quiet)
	}
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
	if is := backlog.Reduce(f.events(res.Dir)).Issues[1]; is.State != backlog.StateMerged || is.Salvages != 1 {
		t.Errorf("#1: %s after %d salvages; want merged after the one salvage relaunch", is.State, is.Salvages)
	}
}

// secondLookCut is the real runs, except that the supervisor is cut dead
// (its context cancelled) when it comes to look at the issue's worker a
// second time, before it sees anything: each life looks at the worker
// once, whole, however long that takes on a loaded machine.
type secondLookCut struct {
	Runs
	issue  int
	cancel context.CancelFunc
	looks  atomic.Int32
}

func (c *secondLookCut) Observe(ctx context.Context, runDir string, now time.Time) runtime.Observation {
	if !strings.HasPrefix(filepath.Base(runDir), fmt.Sprintf("i%d-a", c.issue)) {
		return c.Runs.Observe(ctx, runDir, now)
	}
	if c.looks.Load() >= 1 {
		c.cancel()
		return runtime.Observation{RunDir: runDir, Err: context.Canceled} // nothing seen: nothing acted on
	}
	obs := c.Runs.Observe(ctx, runDir, now)
	if obs.Record != nil {
		c.looks.Add(1)
	}
	return obs
}
