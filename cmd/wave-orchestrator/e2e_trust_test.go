package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// startAndKillLauncher starts a launcher, waits until the first runs of
// ids are all running, and kills the launcher with SIGKILL.
func startAndKillLauncher(t *testing.T, r *testRepo, ids ...string) {
	t.Helper()
	first := r.command(ctxFor(t), "launch", "--lane", "main", "--no-dashboard")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "running agents "+strings.Join(ids, ","), 30*time.Second, func() bool {
		for _, id := range ids {
			b, err := os.ReadFile(filepath.Join(r.layout().RunDir(0, id, 1), "runtime.json"))
			if err != nil || !strings.Contains(string(b), `"running"`) {
				return false
			}
		}
		return true
	})
	_ = first.Process.Signal(syscall.SIGKILL)
	_ = first.Wait()
}

// A torn last line in events.jsonl (a crash or a full disk mid-append)
// must not swallow the next wave run's start: after a kill -9 the next
// launch still sees the interrupted run and adopts its agents instead of
// launching them again.
func TestTornEventTailDoesNotHideInterruptedRun(t *testing.T) {
	r := newRepo(t)
	ids := []string{"A1", "A2", "A3"}
	var impl []agentSpec
	for _, id := range ids {
		impl = append(impl, implAgent(id, "local.delay: 3s"))
	}
	r.writeWave(0, append(impl, closureAgents()...)...)
	r.write(".wave/lanes/main/events.jsonl", `{"recordVersion":1,"id":"ctrl-wave_run-torn","lane":"main","wave":0,"entityType":"wave_ru`)
	startAndKillLauncher(t, r, ids...)
	res := launch(t, r)
	if res.code != 0 {
		t.Fatalf("relaunch exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	evs, bad, err := state.ReadEvents(r.layout().EventsPath())
	if err != nil || len(bad) != 1 || !strings.HasSuffix(bad[0], ":1") {
		t.Fatalf("events: err %v, bad lines %v; want only the torn first line", err, bad)
	}
	launched, adopted := agentStarts(evs)
	for _, id := range ids {
		if launched[id] != 1 || adopted[id] != 1 {
			t.Fatalf("%s launched %d adopted %d; want one launch and one adoption", id, launched[id], adopted[id])
		}
	}
}

// Deleting the lock file under a running launcher does not let a second
// launcher run the same lane: it exits 32.
func TestDeletedLockFileKeepsSecondLauncherOut(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1", "local.delay: 3s")}, closureAgents()...)...)
	ctx := ctxFor(t)
	first := r.start(ctx, "launch", "--lane", "main", "--no-dashboard")
	waitFor(t, "A1 running", 30*time.Second, func() bool {
		b, err := os.ReadFile(filepath.Join(r.layout().RunDir(0, "A1", 1), "runtime.json"))
		return err == nil && strings.Contains(string(b), `"running"`)
	})
	if err := os.Remove(r.layout().LockPath()); err != nil {
		t.Fatal(err)
	}
	res := r.run(ctx, "launch", "--lane", "main", "--no-dashboard")
	if res.code != 32 {
		t.Fatalf("second launcher exit %d, stderr %q; want 32", res.code, res.stderr)
	}
	if out := first.wait(t, "first launcher", time.Minute); out.code != 0 {
		t.Fatalf("first launcher exit %d\n%s\n%s", out.code, out.stdout, out.stderr)
	}
}

// A corrupt ledger.json is reported, kept as a backup and rebuilt from
// the events; --auto-next then goes on with the next wave.
func TestCorruptLedgerDoesNotStopAutoNext(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	if res := launch(t, r, "--start-wave", "0", "--end-wave", "0"); res.code != 0 {
		t.Fatalf("wave 0: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	r.writeWave(1, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	r.write(".wave/lanes/main/ledger.json", "{\"completedWaves\": [0,")
	res := launch(t, r, "--auto-next")
	if res.code != 0 || !strings.Contains(res.stdout, "ledger") || !strings.Contains(res.stdout, "rebuilt") {
		t.Fatalf("auto-next over a corrupt ledger: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	waves := map[int]int{}
	for _, ev := range r.events() {
		if ev.EntityType == state.EntityWaveRun && ev.Action == "started" {
			waves[ev.Wave]++
		}
	}
	if waves[0] != 1 || waves[1] != 1 {
		t.Fatalf("wave runs started %v; want wave 0 once (before) and wave 1 once", waves)
	}
	if backups, _ := filepath.Glob(r.layout().LedgerPath() + ".corrupt-*"); len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
}
