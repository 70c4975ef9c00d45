package backlogrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// waveHook is an origin hook (pre-receive or post-receive) that kills the
// supervisor whose pid is in ctl/pid with SIGKILL when a push updates the
// wave branch (not its creation, not a worker or claim branch) to a commit
// it has not killed for yet, and notes that sha in ctl/killed. As pre-receive it
// also refuses the push: the supervisor died after update-ref and before
// its push landed. As post-receive the push has landed: it died between
// the push and recording the merge.
func waveHook(reject bool) string {
	exit := "exit 0"
	if reject {
		exit = `[ -n "$killed" ] && exit 1; exit 0`
	}
	return `#!/bin/sh
CTL="$(dirname "$0")/../ctl"
killed=
while read old new ref; do
  case "$ref" in
    refs/heads/wave/*-i[0-9]*) ;;
    refs/heads/wave/*)
      pid=$(cat "$CTL/pid" 2>/dev/null)
      if [ "$old" != 0000000000000000000000000000000000000000 ] && [ -n "$pid" ] && ! grep -qx "$new" "$CTL/killed" 2>/dev/null; then
        : > "$CTL/pid"
        kill -9 "$pid"
        echo "$new" >> "$CTL/killed"
        killed=1
      fi ;;
  esac
done
` + exit + "\n"
}

// TestBacklogCrashAtTheWavePushResumesOnce kills the supervisor with
// SIGKILL at every merge's push of the wave branch, before it lands
// (between update-ref and push) or just after (between push and record),
// and restarts it each time: every issue is merged exactly once, and a
// merge commit made before the crash is the one that lands.
func TestBacklogCrashAtTheWavePushResumesOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, hook string
		reject     bool
	}{
		{"between_update_ref_and_push", "pre-receive", true},
		{"between_push_and_record", "post-receive", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e2etest.NewBacklogRepo(t)
			for n := 1; n <= 3; n++ {
				r.Issue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: part%d/**", n))
			}
			ctl := filepath.Join(r.Origin, "ctl")
			if err := os.MkdirAll(ctl, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(r.Origin, "hooks", c.hook), []byte(waveHook(c.reject)), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1,2,3", "--no-dashboard", "--width", "1"}}
			defer l.Dump(t)
			for life := 0; ; life++ {
				if life > 8 {
					t.Fatal("the run did not finish after 8 restarts")
				}
				cmd := l.Start(ctx, filepath.Join(ctl, "pid"))
				err := cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
					continue // killed by the hook: start the next life
				}
				if err != nil {
					t.Fatalf("life %d ended with %v", life, err)
				}
				break
			}
			killed, _ := os.ReadFile(filepath.Join(ctl, "killed"))
			shas := strings.Fields(string(killed))
			if len(shas) != 3 {
				t.Errorf("the supervisor was killed at %d wave pushes, want 3 (one per merge)", len(shas))
			}
			run, evs := e2etest.BacklogEvents(t, r)
			merged := map[int]int{}
			for _, ev := range evs {
				if ev.Kind == backlog.EvMerged {
					merged[ev.Issue]++
				}
			}
			log := e2etest.GitIn(t, r.Origin, "log", "--merges", "--format=%H %s", run.Info.WaveBranch)
			for n := 1; n <= 3; n++ {
				if merged[n] != 1 || run.Issues[n].State != backlog.StateMerged {
					t.Errorf("#%d: %d merged events, state %s; want merged once", n, merged[n], run.Issues[n].State)
				}
				if c := strings.Count(log, fmt.Sprintf("Merge #%d:", n)); c != 1 {
					t.Errorf("#%d has %d merge commits on the wave branch, want 1:\n%s", n, c, log)
				}
			}
			// The merge commit a killed life made is the one on origin: the
			// restart reused it (before the push) or found it (after).
			for _, sha := range shas {
				if !strings.Contains(log, sha) {
					t.Errorf("merge commit %s of a killed life is not on the wave branch:\n%s", sha, log)
				}
			}
			if !run.Finished || run.Tally().Merged != 3 {
				t.Errorf("run finished=%v tally %+v", run.Finished, run.Tally())
			}
		})
	}
}

// TestBacklogTallyIdenticalAfterKill9: the tally `backlog status --json`
// shows at a quiet moment is the one it shows after the supervisor is
// killed with SIGKILL, and after a new supervisor resumed the run.
func TestBacklogTallyIdenticalAfterKill9(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Merges", "Files: a/**")
	r.Issue(2, "Asks", "Files: b/**\n\nlocal-agent: result=needs-input question=\"Which?\"")
	r.Issue(3, "Works for a long time", "Files: c/**\n\nlocal-agent: hang")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1,2,3", "--no-dashboard"}}
	defer l.Dump(t)
	first := l.Start(ctx, "")
	want := backlog.Tally{Merged: 1, InFlight: 1, NeedsInput: 1}
	var before e2etest.StatusJSON
	deadline := time.Now().Add(time.Minute)
	for {
		if v, err := r.TryStatus(); err == nil {
			if before = v; v.Tally == want {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not reach %+v: %+v", want, before)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	after := r.Status(t)
	if after.State != "interrupted" || after.Tally != before.Tally || !reflect.DeepEqual(after.Issues, before.Issues) {
		t.Fatalf("after kill -9: %+v\nbefore: %+v", after, before)
	}
	second := l.Start(ctx, "")
	deadline = time.Now().Add(time.Minute)
	for !strings.Contains(l.Outs[1].String(), "resuming run") {
		if time.Now().After(deadline) {
			t.Fatal("the second supervisor did not resume the run")
		}
		time.Sleep(50 * time.Millisecond)
	}
	resumed := r.Status(t)
	if resumed.State != "running" || resumed.Tally != before.Tally || !reflect.DeepEqual(resumed.Issues, before.Issues) {
		t.Fatalf("after the resume: %+v\nbefore: %+v", resumed, before)
	}
	if res := r.RunEnv(ctx, "backlog", "stop"); res.Code != 0 {
		t.Fatalf("stop: %d %s", res.Code, res.Stderr)
	}
	_ = second.Wait()
}
