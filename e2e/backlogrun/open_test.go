package backlogrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// openHook is an origin hook that kills the supervisor whose pid is in
// ctl/pid with SIGKILL the first time a push creates a ref matching
// pattern (a shell case pattern), and notes it in ctl/killed. As
// pre-receive it also refuses that push (the supervisor died before it
// landed); as post-receive the push has landed (it died before recording
// what it pushed).
func openHook(pattern string, reject bool) string {
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
    ` + pattern + `)
      pid=$(cat "$CTL/pid" 2>/dev/null)
      if [ "$old" = 0000000000000000000000000000000000000000 ] && [ -n "$pid" ] && [ ! -s "$CTL/killed" ]; then
        : > "$CTL/pid"
        kill -9 "$pid"
        echo "$ref" >> "$CTL/killed"
        killed=1
      fi ;;
  esac
done
` + exit + "\n"
}

// TestBacklogKill9WhileOpeningResumesTheOneRun kills `backlog run` with
// SIGKILL at the exact moments it opens a run (before and after the wave
// branch's name is reserved, before and after the wave branch's push
// lands) and restarts it: the restart resumes that run, and origin has one wave
// branch, not a -2 made by a second run.
func TestBacklogKill9WhileOpeningResumesTheOneRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, hook, pattern string
		reject              bool
	}{
		{"before_the_name_reservation_lands", "pre-receive", "refs/heads/wave-names/*", true},
		{"after_the_name_is_reserved", "post-receive", "refs/heads/wave-names/*", false},
		{"before_the_wave_branch_lands", "pre-receive", "refs/heads/wave/*", true},
		{"after_the_wave_branch_lands", "post-receive", "refs/heads/wave/*", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e2etest.NewBacklogRepo(t)
			r.Issue(1, "Issue 1", "Files: part1/**")
			ctl := filepath.Join(r.Origin, "ctl")
			if err := os.MkdirAll(ctl, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(r.Origin, "hooks", c.hook), []byte(openHook(c.pattern, c.reject)), 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"}}
			defer l.Dump(t)
			for life := 0; ; life++ {
				if life > 3 {
					t.Fatal("the run did not finish after 3 restarts")
				}
				cmd := l.Start(ctx, filepath.Join(ctl, "pid"))
				err := cmd.Wait()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
					continue
				}
				if err != nil {
					t.Fatalf("life %d ended with %v", life, err)
				}
				break
			}
			if killed, _ := os.ReadFile(filepath.Join(ctl, "killed")); len(strings.Fields(string(killed))) != 1 {
				t.Fatalf("the supervisor was killed %q times, want once (at %s)", killed, c.pattern)
			}
			entries, _ := os.ReadDir(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog"))
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Fatalf("%d entries in the lane's backlog dir, want the one run: %v", len(entries), names)
			}
			run, _ := e2etest.BacklogEvents(t, r)
			refs := strings.Fields(e2etest.GitIn(t, r.Origin, "for-each-ref", "--format=%(refname)", "refs/heads/wave/", "refs/heads/wave-names/"))
			var waves []string
			for _, ref := range refs {
				if !strings.Contains(ref, "-i1") {
					waves = append(waves, ref)
				}
			}
			if len(waves) != 1 || waves[0] != "refs/heads/"+run.Info.WaveBranch || strings.HasSuffix(run.Info.WaveBranch, "-2") {
				t.Errorf("origin has wave refs %v, want only the run's %s (and no name reservation left)", waves, run.Info.WaveBranch)
			}
			if !run.Finished || run.Tally().Merged != 1 {
				t.Errorf("run finished=%v tally %+v", run.Finished, run.Tally())
			}
		})
	}
}

// TestBacklogRunOfDeliveredIssuesSaysWhichRunAndTouchesNothing: `backlog
// run --issues X` after the run that merged X finished says which run
// delivered X and exits 0, with no new run, push or branch.
func TestBacklogRunOfDeliveredIssuesSaysWhichRunAndTouchesNothing(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Issue 1", "Files: part1/**")
	r.Issue(2, "Issue 2", "Files: part2/**")
	ctx := context.Background()
	if res := r.RunEnv(ctx, "backlog", "run", "--issues", "1,2", "--no-dashboard"); res.Code != 0 {
		t.Fatalf("first run: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	run, _ := e2etest.BacklogEvents(t, r)
	refs := func() string { return e2etest.GitIn(t, r.Origin, "for-each-ref", "--format=%(refname) %(objectname)") }
	before := refs()
	again := r.RunEnv(ctx, "backlog", "run", "--issues", "2,1", "--no-dashboard")
	if again.Code != 0 || !strings.Contains(again.Stdout, "delivered by backlog run "+run.Info.ID) {
		t.Fatalf("second run: exit %d, want 0 saying run %s delivered them:\n%s\n%s", again.Code, run.Info.ID, again.Stdout, again.Stderr)
	}
	if after := refs(); after != before {
		t.Errorf("origin changed:\nbefore %s\nafter  %s", before, after)
	}
	e2etest.BacklogEvents(t, r) // still exactly one run
}

// TestBacklogKill9DuringVerifyLeavesNoScratchCheckout: a supervisor
// killed with SIGKILL while backlog.verify runs in its scratch checkout
// leaves that checkout behind; the next `backlog run` removes it as it
// starts (and registers no worktree in the clone), then finishes the run.
func TestBacklogKill9DuringVerifyLeavesNoScratchCheckout(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Issue 1", "Files: part1/**")
	ctl := filepath.Join(filepath.Dir(r.Root), "ctl")
	if err := os.MkdirAll(ctl, 0o755); err != nil {
		t.Fatal(err)
	}
	// The verify command's parent is the supervisor: the first verify
	// kills it, later ones pass.
	verify := `if [ ! -e ` + filepath.Join(ctl, "killed") + ` ]; then : > ` + filepath.Join(ctl, "killed") + `; kill -9 $PPID; sleep 5; fi`
	cfg, _ := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	r.Write("wave.config.yaml", strings.Replace(string(cfg), "\nbacklog:\n", "\nbacklog:\n  verify: [sh, -c, '"+verify+"']\n", 1))
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The verify step is the test's hand that kills the supervisor, which
	// a sandboxed verify cannot see (e2e/sandbox proves it): unconfined.
	l := &e2etest.Lives{R: r, Args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"},
		Env: []string{"TMPDIR=" + tmp, "WAVE_BACKLOG_SANDBOX_MODE=off"}}
	defer l.Dump(t)
	first := l.Start(ctx, "")
	_ = first.Wait()
	if ws, ok := first.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the first life was not killed during verify: %v", first.ProcessState)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "wave-verify-*", "tree", ".git")); len(left) != 1 {
		t.Fatalf("the kill left no scratch checkout to clean up (the test does not reproduce the case): %v", left)
	}
	second := l.Start(ctx, "")
	if err := second.Wait(); err != nil {
		t.Fatalf("second life: %v", err)
	}
	if list := e2etest.GitIn(t, r.Root, "worktree", "list", "--porcelain"); strings.Contains(list, "wave-verify-") {
		t.Errorf("a scratch worktree is still registered:\n%s", list)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "wave-verify-*")); len(left) > 0 {
		t.Errorf("scratch directories left: %v", left)
	}
	if run, _ := e2etest.BacklogEvents(t, r); !run.Finished || run.Tally().Merged != 1 {
		t.Errorf("run finished=%v tally %+v", run.Finished, run.Tally())
	}
}
