package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// script writes an executable shell script under the test's temporary
// directory (which sandboxed runs of the fixture may read) and returns
// its path.
func (f *fixture) script(name, body string) string {
	f.t.Helper()
	p := filepath.Join(f.t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// pushBase commits files into the user's clone and pushes them as
// origin's main (what the run's branches start from).
func (f *fixture) pushBase(files map[string]string) {
	f.t.Helper()
	for p, c := range files {
		f.write(p, c)
	}
	git(f.t, f.root, "add", "-A")
	git(f.t, f.root, "commit", "-qm", "base")
	git(f.t, f.root, "push", "-q", "origin", "HEAD:main")
}

// A setup that fails is tried once more in the same checkout; failing
// again, the issue parks before any worker ran, with the end of its log
// in the question (cleaned of the terminal escapes it printed), both
// logs kept in the run's directory. The other issues go on.
func TestASetupThatFailsTwiceParksTheIssueWithItsLog(t *testing.T) {
	f := newFixture(t)
	setup := f.script("setup.sh", `test "$WAVE_ISSUE_NUMBER" = 1 || exit 0
printf '\033[31mSETUP-SAYS: cannot reach the package registry\033[0m\n'
exit 3
`)
	f.config = baseConfig + "  setup: [sh, " + shellQuote(setup) + "]\n"
	f.issue(1, "Needs packages", "Files: a/**")
	f.issue(2, "Fine", "Files: b/**")
	res := f.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("run: exit %d, %v; want 43 (a parked issue)", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	is := r.Issues[1]
	if is.State != backlog.StateParked || is.Attempts != 0 {
		t.Fatalf("#1: %s after %d worker runs; want parked before any worker ran", is.State, is.Attempts)
	}
	if !strings.Contains(is.Question, "SETUP-SAYS: cannot reach the package registry") || !strings.Contains(is.Question, "failed 2 times") {
		t.Errorf("the question lacks the setup log's tail:\n%s", is.Question)
	}
	if _, err := os.Stat(is.Worktree); is.Worktree == "" || err != nil {
		t.Errorf("#1's checkout %q is not kept with it (%v): status and prune cannot find it", is.Worktree, err)
	}
	if strings.ContainsRune(is.Question, '\x1b') {
		t.Errorf("the question carries the log's raw terminal escapes: %q", is.Question)
	}
	for _, try := range []string{"i1-1.log", "i1-2.log"} {
		b, err := os.ReadFile(filepath.Join(res.Dir, "setup", try))
		if err != nil || !strings.Contains(string(b), "SETUP-SAYS") {
			t.Errorf("setup log %s: %v %q", try, err, b)
		}
	}
	if c := count(f.events(res.Dir), backlog.EvSetup, 1); c != 4 {
		t.Errorf("%d setup events of #1, want 4 (running and failed, twice)", c)
	}
	if is2 := r.Issues[2]; is2.State != backlog.StateMerged || is2.Setup == nil || is2.Setup.Outcome != backlog.SetupPassed {
		t.Errorf("#2: %s, setup %+v; want merged after its setup passed", is2.State, is2.Setup)
	}
}

// The ignored files backlog.copyIgnored names — a private .env, a local
// config — are in every worker's checkout and in verify's, with their
// modes; a file the globs name that git does not ignore (the user's
// work in progress) is never copied.
func TestIgnoredFilesNamedInCopyIgnoredReachEveryCheckout(t *testing.T) {
	f := newFixture(t)
	f.pushBase(map[string]string{".gitignore": ".wave/\n.env\nconfig/*.local.yml\n"})
	f.write("config/db.local.yml", "db: local-db\n")
	f.write("config/wip.yml", "work in progress\n")
	if err := os.WriteFile(filepath.Join(f.root, ".env"), []byte("API_SECRET=s3cr3t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	worker := f.script("worker.sh", `n=$WAVE_ISSUE_NUMBER
mkdir -p seen
{ cat .env; stat -c %a .env; cat config/db.local.yml; test -e config/wip.yml && echo WIP-COPIED; } > seen/i$n.txt
git add seen && git -c user.name=w -c user.email=w@example.com commit -qm "seen by #$n"
echo "[backlog-result] state=done"
`)
	verify := f.script("verify.sh", `test "$(stat -c %a .env)" = 600 && grep -q API_SECRET .env && grep -q local-db config/db.local.yml && ! test -e config/wip.yml`)
	f.config = strings.Replace(baseConfig, "    id: local\n", "    id: shell\n    shell.command: sh "+shellQuote(worker)+"\n", 1) +
		"  copyIgnored: [.env, \"config/*.yml\"]\n  verify: [sh, " + shellQuote(verify) + "]\n"
	f.issue(1, "One", "Files: seen/i1.txt")
	f.issue(2, "Two", "Files: seen/i2.txt")
	res := f.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	for _, n := range []int{1, 2} {
		is := r.Issues[n]
		if is.State != backlog.StateMerged || is.Reworks != 0 {
			t.Errorf("#%d: %s after %d rework rounds; want merged, verify passing at once", n, is.State, is.Reworks)
		}
		seen, ok := f.originFile(r.Info.WaveBranch, "seen/i"+itoa(n)+".txt")
		if !ok || !strings.Contains(seen, "API_SECRET=s3cr3t\n600\n") || !strings.Contains(seen, "local-db") {
			t.Errorf("#%d's worker did not find the ignored files with their modes: %q", n, seen)
		}
		if strings.Contains(seen, "WIP-COPIED") {
			t.Errorf("#%d's checkout got the user's untracked, not ignored, config/wip.yml", n)
		}
	}
	if _, ok := f.originFile(r.Info.WaveBranch, ".env"); ok {
		t.Error(".env reached the wave branch")
	}
}

// setupCounter makes backlog.setup a script that appends, for each run,
// the issue and the directory it ran in to a file of the test's (it acts
// outside its checkout, so the workers run unsandboxed), and returns
// that file.
func (f *fixture) setupCounter() string {
	f.t.Helper()
	f.actsOutside()
	runs := filepath.Join(f.t.TempDir(), "setup-runs")
	setup := f.script("setup.sh", `echo "$WAVE_ISSUE_NUMBER $(pwd -P)" >> `+shellQuote(runs)+"\n")
	f.config = strings.Replace(f.config, "\nbacklog:\n", "\nbacklog:\n  setup: [sh, "+shellQuote(setup)+"]\n", 1)
	return runs
}

// setupRunsIn counts the lines of the counter file naming issue n and dir.
func setupRunsIn(t *testing.T, file string, n int, dir string) int {
	t.Helper()
	b, _ := os.ReadFile(file)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	c := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l == itoa(n)+" "+dir {
			c++
		}
	}
	return c
}

// A salvage relaunch and a rework round go on in the checkout setup made
// ready, without running setup again, even across a supervisor killed
// between the salvage and its relaunch: the run's log says setup passed
// there. Verify's checkout, fresh at each would-be merge commit, gets
// setup of its own each time.
func TestSalvageReusesTheCheckoutWithoutSetupAgain(t *testing.T) {
	f := newFixture(t)
	f.config = baseConfig + `  verify: [sh, -c, 'test "$WAVE_ISSUE_NUMBER" != 2 || test -e backlog-work/issue-2-fix.md']` + "\n"
	runs := f.setupCounter()
	// One group: #2 starts once #1 merged, in the supervisor's second life.
	f.issue(1, "Fails once", "Files: shared/**\n\nlocal-agent: fail-attempts=1")
	f.issue(2, "Needs a rework", "Files: shared/**")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	first := f.runCtx(ctx, func(o *Options) { o.Runs = startCut{Runs: o.Runs, at: 2, cancel: cancel} }, 1, 2)
	if first.err == nil {
		t.Fatal("the first life was not cut at the salvage relaunch")
	}
	res := f.run(1, 2)
	if res.err != nil || res.ExitCode != exitcode.OK || !res.Resumed {
		t.Fatalf("resume: exit %d resumed %v, %v", res.ExitCode, res.Resumed, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateMerged || is.Salvages != 1 {
		t.Fatalf("#1: %s after %d salvages; want merged after 1", is.State, is.Salvages)
	}
	if is := r.Issues[2]; is.State != backlog.StateMerged || is.Reworks != 1 {
		t.Fatalf("#2: %s after %d rework rounds; want merged after 1", is.State, is.Reworks)
	}
	for _, n := range []int{1, 2} {
		if c := setupRunsIn(t, runs, n, r.Issues[n].Worktree); c != 1 {
			b, _ := os.ReadFile(runs)
			t.Errorf("setup ran %d times in #%d's checkout, want once:\n%s", c, n, b)
		}
	}
	b, _ := os.ReadFile(runs)
	if all := strings.Count(string(b), "\n"); all != 2+3 {
		t.Errorf("%d setup runs in all, want 5: one per worker checkout, one per verify (#1 once, #2 twice):\n%s", all, b)
	}
}

// A checkout deleted while its issue was set aside is made again, and
// setup runs in the new one.
func TestACheckoutMadeAgainGetsSetupAgain(t *testing.T) {
	f := newFixture(t)
	runs := f.setupCounter()
	gate := filepath.Join(f.t.TempDir(), "go")
	f.issue(1, "Loses its checkout", "Files: a/**\n\nlocal-agent: wait="+gate+" fail-attempts=1")
	done := make(chan result, 1)
	go func() { done <- f.run(1) }()
	var wt string
	waitFor(t, "the first worker to start", func() bool {
		dir := f.currentRunDir()
		if dir == "" {
			return false
		}
		r, _, err := runlog.Read(dir)
		if err != nil || r.Issues[1] == nil || r.Issues[1].State != backlog.StateRunning {
			return false
		}
		wt = r.Issues[1].Worktree
		return true
	})
	if err := os.RemoveAll(wt); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	if c := setupRunsIn(t, runs, 1, wt); c != 2 {
		b, _ := os.ReadFile(runs)
		t.Errorf("setup ran %d times at %s, want twice (the first checkout, then the one made again):\n%s", c, wt, b)
	}
}

// Setup on a kubernetes lane is refused before anything is claimed: a
// pod clones origin itself, where neither the supervisor nor the user's
// ignored files are.
func TestSetupOnAKubernetesLaneIsRefusedBeforeAnyClaim(t *testing.T) {
	for _, key := range []string{"  setup: [npm, ci]\n", "  copyIgnored: [.env]\n"} {
		f := newFixture(t)
		f.config = baseConfig + key
		f.issue(1, "Set up", "Files: a/**")
		o := f.options(t.Context(), &syncBuffer{}, 1)
		lane := *o.Lane
		lane.Runtime.Backend = config.BackendKubernetes
		o.Lane = &lane
		s, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Run(t.Context())
		name := strings.TrimSpace(strings.Split(key, ":")[0])
		if err == nil || !strings.Contains(err.Error(), "backlog."+name) || !strings.Contains(err.Error(), "runtime.kubernetes.image") {
			t.Fatalf("%s on a kubernetes lane: %v; want an error naming backlog.%s and the fix", name, err, name)
		}
		if refs := gittest.Run(t, f.origin, "for-each-ref", "refs/heads/wave-claims"); strings.TrimSpace(refs) != "" {
			t.Errorf("claims were made before the refusal:\n%s", refs)
		}
	}
}
