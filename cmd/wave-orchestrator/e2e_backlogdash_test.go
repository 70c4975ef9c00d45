package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// startEnv runs the binary in the background with the backlog repo's
// environment (state home, short heartbeats) and extra entries.
func (r *backlogRepo) startEnv(ctx context.Context, extra []string, args ...string) *bgRun {
	r.t.Helper()
	cmd := r.command(ctx, args...)
	cmd.Env = append(append(cmd.Env, r.env()...), extra...)
	return startCmd(r.t, cmd)
}

// originRefs lists the refs of origin under prefix.
func (r *backlogRepo) originRefs(t *testing.T, prefix string) string {
	t.Helper()
	return gitIn(t, r.origin, "for-each-ref", "--format=%(refname)", prefix)
}

// nothingClaimed fails the test if the run claimed, cut or recorded
// anything: no claim ref and no wave branch on origin, no run dir.
func (r *backlogRepo) nothingClaimed(t *testing.T) {
	t.Helper()
	if refs := r.originRefs(t, "refs/heads/wave-claims/"); refs != "" {
		t.Errorf("claim refs on origin although preflight failed:\n%s", refs)
	}
	if refs := r.originRefs(t, "refs/heads/wave/"); refs != "" {
		t.Errorf("a wave branch was pushed although preflight failed:\n%s", refs)
	}
	if runs, _ := filepath.Glob(filepath.Join(r.layout().StateDir, "backlog", "*")); len(runs) > 0 {
		t.Errorf("backlog run dirs were created: %v", runs)
	}
}

func TestBacklogRunPreflightFailsBeforeAnyClaim(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "Add a greeting", "Files: src/greet/**")
	r.issue(2, "Add a farewell", "Files: src/bye/**")
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	oldGit := "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = version ] && { echo 'git version 2.37.3'; exit 0; }; done\nexec " + realGit + " \"$@\"\n"
	for _, tc := range []struct {
		name string
		path string
		args []string
		code int
		want []string
	}{
		{"no tmux", pathOf(t, []string{"git"}, nil), nil, 1, []string{
			"wave-orchestrator: cannot backlog run lane main, nothing was started:",
			"  - tmux: not found on PATH; install tmux >= 3.2 (e.g. `apt-get install tmux`, `brew install tmux`)"}},
		{"git older than 2.38", pathOf(t, []string{"tmux"}, map[string]string{"git": oldGit}), nil, 1, []string{
			"wave-orchestrator: cannot backlog run lane main, nothing was started:",
			"  - git: 2.37 is older than 2.38 (backlog merges need `git merge-tree --write-tree`); install git >= 2.38"}},
		{"worker executor not on PATH", pathOf(t, []string{"git", "tmux"}, nil), []string{"--executor", "claude"}, 43, []string{
			"wave-orchestrator: cannot backlog run lane main, nothing was started:",
			"  - executor claude: not on PATH (needed by backlog workers); install it, put it on PATH, or give the workers another executor (backlog.executor.id, or --executor)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"backlog", "run", "--issues", "1,2"}, tc.args...)
			cmd := r.command(ctxFor(t), args...)
			cmd.Env = append(append(cmd.Env, r.env()...), "PATH="+tc.path)
			res := runCmd(t, cmd)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.code, tc.code, res.stdout, res.stderr)
			}
			if got := strings.Join(lines(res.stderr), "\n"); got != strings.Join(tc.want, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, strings.Join(tc.want, "\n"))
			}
			if strings.Contains(res.stdout, "dashboard:") || strings.Contains(res.stdout, "backlog:") {
				t.Errorf("printed progress before failing:\n%s", res.stdout)
			}
			r.nothingClaimed(t)
		})
	}
}

// The dashboard session `backlog run` starts shows the backlog view: the
// tally and the workers while they run, then the run's final result, and
// it stays after the run ends.
func TestBacklogRunDashboardShowsTallyThenResult(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "Add a greeting", "Files: src/greet/**\n\nlocal-agent: delay=4s")
	r.issue(2, "Add a farewell", "Files: src/bye/**\n\nlocal-agent: delay=4s")
	r.issue(3, "Add a wave", "Files: src/wave/**\n\nlocal-agent: delay=4s")
	bg := r.startEnv(ctxFor(t), nil, "backlog", "run", "--issues", "1,2,3")
	socket := r.layout().Socket()

	var frame string
	running := regexp.MustCompile(`(?m)^(› |  )#[123]\s+running\b`)
	waitFor(t, "the dashboard to show the tally with workers running", time.Minute, func() bool {
		frame = r.capture(lanes.DashboardSession)
		return regexp.MustCompile(`merged \d / in flight [1-3] / blocked 0 / needs-input 0`).MatchString(frame) && running.MatchString(frame)
	})
	if !strings.Contains(frame, "· running ·") || !strings.Contains(frame, " backlog ") {
		t.Errorf("the backlog view is not shown first, or not as running:\n%s", frame)
	}

	res := bg.wait(t, "backlog run", 2*time.Minute)
	if res.code != 0 {
		t.Fatalf("backlog run exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{
		"dashboard: tmux -L " + socket + " attach -t dashboard\n",
		"watch a worker: tmux -L " + socket + " attach -t backlog-i<issue>\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("backlog run output lacks %q:\n%s", want, res.stdout)
		}
	}
	waitFor(t, "the final result in the dashboard", 30*time.Second, func() bool {
		frame = r.capture(lanes.DashboardSession)
		return strings.Contains(frame, "■ backlog run finished · exit 0 · merged 3/3")
	})
	if !strings.Contains(frame, "merged 3 / in flight 0 / blocked 0 / needs-input 0") {
		t.Errorf("final frame without the final tally:\n%s", frame)
	}
	for _, n := range []string{"1", "2", "3"} {
		if !regexp.MustCompile(`(?m)^(› |  )#` + n + `\s+merged\b`).MatchString(frame) {
			t.Errorf("final frame does not show #%s merged:\n%s", n, frame)
		}
	}

	// One frame of the same view, for scripts.
	one := r.runEnv(ctxFor(t), "dashboard", "--view", "backlog")
	if one.code != 0 || !strings.Contains(one.stdout, "· finished ·") || !strings.Contains(one.stdout, "merged 3 / in flight 0") ||
		!strings.Contains(one.stdout, "■ backlog run finished · exit 0") || strings.Contains(one.stdout, "›") {
		t.Errorf("dashboard --view backlog: exit %d\n%s%s", one.code, one.stdout, one.stderr)
	}
}

func TestDashboardViewFlag(t *testing.T) {
	r := newBacklogRepo(t)
	none := r.runEnv(ctxFor(t), "dashboard", "--view", "backlog")
	if none.code != 0 || !strings.Contains(none.stdout, "no backlog run on this lane yet") {
		t.Errorf("--view backlog without a run: exit %d\n%s%s", none.code, none.stdout, none.stderr)
	}
	bad := r.runEnv(ctxFor(t), "dashboard", "--view", "issues")
	if bad.code != 2 || !strings.Contains(bad.stderr, `--view "issues": want waves or backlog`) {
		t.Errorf("--view issues: exit %d\n%s", bad.code, bad.stderr)
	}
	// Without --view the one frame stays the wave view scripts expect.
	if waves := r.runEnv(ctxFor(t), "dashboard"); waves.code != 0 || strings.Contains(waves.stdout, "backlog run") {
		t.Errorf("dashboard without --view: exit %d\n%s", waves.code, waves.stdout)
	}
}

// doctor names the GitHub token variable of a github backlog source,
// set or not, and never prints its value.
func TestDoctorChecksBacklogToken(t *testing.T) {
	r := newBacklogRepo(t)
	cfg, err := os.ReadFile(filepath.Join(r.root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.write("wave.config.yaml", string(cfg)+"github:\n  owner: acme\n  repo: shop\n  tokenEnv: SHOP_TOKEN\n")
	unset := r.runEnv(ctxFor(t), "doctor")
	if unset.code != 1 || !strings.Contains(unset.stdout, "error backlog: github source acme/shop: $SHOP_TOKEN is not set") {
		t.Errorf("doctor without the token: exit %d\n%s", unset.code, unset.stdout)
	}
	if !regexp.MustCompile(`(?m)^ok    git: 2\.\d+ \(>= 2\.38`).MatchString(unset.stdout) {
		t.Errorf("doctor does not report the git version against 2.38:\n%s", unset.stdout)
	}
	cmd := r.command(ctxFor(t), "doctor")
	cmd.Env = append(append(cmd.Env, r.env()...), "SHOP_TOKEN=ghp_s3cr3tvalue")
	set := runCmd(t, cmd)
	if !strings.Contains(set.stdout, "ok    backlog: github source acme/shop, token in $SHOP_TOKEN") {
		t.Errorf("doctor with the token:\n%s", set.stdout)
	}
	if strings.Contains(set.stdout+set.stderr, "s3cr3t") {
		t.Fatalf("doctor printed the token's value:\n%s%s", set.stdout, set.stderr)
	}
}
