package backlogrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// recordedFirst is a shell line that notes "what issue pid" in
// ctl/unrecorded unless the run's log (under runs) already records this
// process: what runs of the repository's code is on record before it
// runs anything.
func recordedFirst(what, runs string) string {
	return `grep -qs "\"proc\":{\"pid\":$$," '` + runs + `'/*/events.jsonl || echo "` + what + ` $WAVE_ISSUE_NUMBER $$" >> "$CTL/unrecorded"
`
}

// orphanVerify is a backlog.verify script that outlives its supervisor:
// it starts a child (its tree), notes "life issue pid child dir" in
// ctl/verifying and holds until ctl/pass-all exists, whoever its parent
// is. Before it notes itself it looks for the verifies of earlier lives
// (ORPHAN_TEST_LIFE) still running and notes each in ctl/overlap.
func orphanVerify(ctl, runs string) string {
	return `#!/bin/sh
CTL='` + ctl + `'
n=$WAVE_ISSUE_NUMBER
` + recordedFirst("verify", runs) + `if [ -e "$CTL/verifying" ]; then
  while read -r life issue pid kid dir; do
    [ "$life" = "$ORPHAN_TEST_LIFE" ] && continue
    for p in $pid $kid; do
      [ -r "/proc/$p/stat" ] || continue
      read -r _ _ st _ < "/proc/$p/stat" || continue
      [ "$st" = Z ] || echo "$issue $p" >> "$CTL/overlap"
    done
  done < "$CTL/verifying"
fi
sleep 600 &
echo "$ORPHAN_TEST_LIFE $n $$ $! $PWD" >> "$CTL/verifying"
until [ -e "$CTL/pass-all" ]; do sleep 0.05; done
kill $!
echo "$n $WAVE_MERGE_COMMIT $(git rev-parse 'HEAD^{tree}')" >> "$CTL/passed"
`
}

// orphan is one verify process ctl/verifying noted, as the test saw it.
type orphan struct {
	life, issue string
	dir         string
	procs       []runtime.ProcID // the script and its child
}

// verifiesOf are the verifies of life in ctl/verifying, each process
// with its start time (zero once gone).
func verifiesOf(ctl, life string) []orphan {
	b, _ := os.ReadFile(filepath.Join(ctl, "verifying"))
	var out []orphan
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != life {
			continue
		}
		o := orphan{life: f[0], issue: f[1], dir: f[4]}
		for _, p := range f[2:4] {
			pid, _ := strconv.Atoi(p)
			start, _, _ := runtime.ProcStartTime(pid)
			o.procs = append(o.procs, runtime.ProcID{Pid: pid, Start: start})
		}
		out = append(out, o)
	}
	return out
}

// TestBacklogKill9UnsandboxedEndsTheKilledVerifiesBeforeVerifyingAgain
// kills the supervisor with SIGKILL while two merge candidates are
// verified without the sandbox (nothing ends them with their parent)
// by a verify that would run on for ever. The resumed supervisor ends
// them, their children too, before it verifies again: no new verify
// starts while one of the killed life runs, their scratch checkouts are
// gone, and every issue is merged once, each merge one a verify passed.
func TestBacklogKill9UnsandboxedEndsTheKilledVerifiesBeforeVerifyingAgain(t *testing.T) {
	t.Parallel()
	const issues = 2
	r := e2etest.NewBacklogRepo(t)
	for n := 1; n <= issues; n++ {
		r.Issue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: part%d/**", n))
	}
	ctl := filepath.Join(r.Origin, "ctl")
	if err := os.MkdirAll(ctl, 0o755); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(r.Root, ".wave", "lanes", "main", "backlog")
	script, setup := filepath.Join(ctl, "verify.sh"), filepath.Join(ctl, "setup.sh")
	if err := os.WriteFile(script, []byte(orphanVerify(ctl, runs)), 0o755); err != nil {
		t.Fatal(err)
	}
	setupScript := "#!/bin/sh\nCTL='" + ctl + "'\n" + recordedFirst("setup", runs) + "echo \"$WAVE_ISSUE_NUMBER $$\" >> \"$CTL/setups\"\n"
	if err := os.WriteFile(setup, []byte(setupScript), 0o755); err != nil {
		t.Fatal(err)
	}
	r.SetBacklogKey(t, "verify: [sh, '"+script+"']")
	r.SetBacklogKey(t, "setup: [sh, '"+setup+"']")
	e2etest.GitIn(t, r.Origin, "config", "core.logAllRefUpdates", "always")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1,2", "--no-dashboard", "--width", "2"}}
	defer l.Dump(t)
	life := func(n int) *e2etest.Life {
		l.Env = []string{"WAVE_BACKLOG_SANDBOX_MODE=off", "ORPHAN_TEST_LIFE=" + strconv.Itoa(n)}
		return e2etest.StartLife(l.Start(ctx, ""))
	}

	first := life(1)
	var killed []orphan
	first.WaitFor(t, "both verifies running", 2*time.Minute, func() bool {
		st, err := r.TryStatus()
		killed = verifiesOf(ctl, "1")
		return err == nil && st.Train != nil && len(st.Train.Verifying) == issues && len(killed) == issues
	})
	// Whatever the test leaves, it leaves nothing running.
	t.Cleanup(func() {
		for _, o := range verifiesOf(ctl, "1") {
			for _, p := range o.procs {
				if runtime.ProcAlive(p.Pid, p.Start) {
					_ = syscall.Kill(p.Pid, syscall.SIGKILL)
				}
			}
		}
	})
	first.Kill(t)
	for _, o := range killed {
		for _, p := range o.procs {
			if p.Start == 0 || !runtime.ProcAlive(p.Pid, p.Start) {
				t.Fatalf("#%s: process %d of its verify did not outlive the killed supervisor: nothing to end", o.issue, p.Pid)
			}
		}
	}

	second := life(2)
	second.WaitFor(t, "the verifies started again", 2*time.Minute, func() bool {
		return len(verifiesOf(ctl, "2")) == issues
	})
	if b, _ := os.ReadFile(filepath.Join(ctl, "overlap")); len(b) > 0 {
		t.Errorf("a new verify started while these of the killed life ran (issue pid):\n%s", b)
	}
	for _, o := range killed {
		for _, p := range o.procs {
			if runtime.ProcAlive(p.Pid, p.Start) {
				t.Errorf("#%s: process %d of the killed life's verify still runs", o.issue, p.Pid)
			}
		}
		if _, err := os.Stat(o.dir); !os.IsNotExist(err) {
			t.Errorf("#%s: the killed life's verify checkout %s is still there (%v)", o.issue, o.dir, err)
		}
	}
	if err := os.WriteFile(filepath.Join(ctl, "pass-all"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	<-second.Done
	if second.Err != nil {
		t.Fatalf("the resumed supervisor ended with %v", second.Err)
	}
	if b, _ := os.ReadFile(filepath.Join(ctl, "unrecorded")); len(b) > 0 {
		t.Errorf("these ran before the run's log recorded them (what issue pid):\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(ctl, "setups")); len(b) == 0 {
		t.Error("backlog.setup never ran")
	}
	out := l.Outs[1].String()
	for _, o := range killed {
		if want := fmt.Sprintf("#%s: its verify (pid %d) was still running", o.issue, o.procs[0].Pid); !strings.Contains(out, want) {
			t.Errorf("the resumed supervisor did not say %q:\n%s", want, out)
		}
	}

	run, evs := e2etest.BacklogEvents(t, r)
	if !run.Finished || run.Tally().Merged != issues {
		t.Fatalf("run finished=%v tally %+v", run.Finished, run.Tally())
	}
	merged := map[int]int{}
	for _, ev := range evs {
		if ev.Kind == backlog.EvMerged {
			merged[ev.Issue]++
		}
	}
	for n := 1; n <= issues; n++ {
		if merged[n] != 1 {
			t.Errorf("#%d merged %d times, want once", n, merged[n])
		}
	}
	everyWaveTipVerified(t, r, ctl, run, evs, issues)
}
