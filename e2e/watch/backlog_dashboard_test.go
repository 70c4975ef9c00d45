package watch

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

func TestBacklogRunPreflightFailsBeforeAnyClaim(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
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
		{"no tmux", e2etest.PathOf(t, []string{"git"}, nil), nil, 1, []string{
			"wave-orchestrator: cannot backlog run lane main, nothing was started:",
			"  - tmux: not found on PATH; install tmux >= 3.2 (e.g. `apt-get install tmux`, `brew install tmux`)"}},
		{"git older than 2.38", e2etest.PathOf(t, []string{"tmux"}, map[string]string{"git": oldGit}), nil, 1, []string{
			"wave-orchestrator: cannot backlog run lane main, nothing was started:",
			"  - git: 2.37 is older than 2.38 (backlog merges need `git merge-tree --write-tree`); install git >= 2.38"}},
		{"worker executor not on PATH", e2etest.PathOf(t, []string{"git", "tmux"}, nil), []string{"--executor", "claude"}, 43, []string{
			"wave-orchestrator: cannot backlog run lane main, nothing was started:",
			"  - executor claude: not on PATH (needed by backlog workers); install it, put it on PATH, or give the workers another executor (backlog.executor.id, or --executor)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"backlog", "run", "--issues", "1,2"}, tc.args...)
			cmd := r.Command(e2etest.Context(t), args...)
			cmd.Env = append(append(cmd.Env, r.Env()...), "PATH="+tc.path)
			res := e2etest.RunCmd(t, cmd)
			if res.Code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", res.Code, tc.code, res.Stdout, res.Stderr)
			}
			if got := strings.Join(e2etest.Lines(res.Stderr), "\n"); got != strings.Join(tc.want, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, strings.Join(tc.want, "\n"))
			}
			if strings.Contains(res.Stdout, "dashboard:") || strings.Contains(res.Stdout, "backlog:") {
				t.Errorf("printed progress before failing:\n%s", res.Stdout)
			}
			r.NothingClaimed(t)
		})
	}
}

// The dashboard session `backlog run` starts shows the backlog view: the
// tally and the workers while they run, then the run's final result, and
// it stays after the run ends.
func TestBacklogRunDashboardShowsTallyThenResult(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Add a greeting", "Files: src/greet/**\n\nlocal-agent: delay=4s")
	r.Issue(2, "Add a farewell", "Files: src/bye/**\n\nlocal-agent: delay=4s")
	r.Issue(3, "Add a wave", "Files: src/wave/**\n\nlocal-agent: delay=4s")
	bg := r.StartEnv(e2etest.Context(t), nil, "backlog", "run", "--issues", "1,2,3")
	socket := r.Layout().Socket()

	var frame string
	running := regexp.MustCompile(`(?m)^(› |  )#[123]\s+running\b`)
	e2etest.WaitFor(t, "the dashboard to show the tally with workers running", time.Minute, func() bool {
		frame = r.Capture(lanes.DashboardSession)
		return regexp.MustCompile(`merged \d / in flight [1-3] / blocked 0 / needs-input 0`).MatchString(frame) && running.MatchString(frame)
	})
	if !strings.Contains(frame, "· running ·") || !strings.Contains(frame, " backlog ") {
		t.Errorf("the backlog view is not shown first, or not as running:\n%s", frame)
	}

	res := bg.Wait(t, "backlog run", 2*time.Minute)
	if res.Code != 0 {
		t.Fatalf("backlog run exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, want := range []string{
		"dashboard: tmux -L " + socket + " attach -t dashboard\n",
		"watch a worker: tmux -L " + socket + " attach -t backlog-i<issue>\n",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("backlog run output lacks %q:\n%s", want, res.Stdout)
		}
	}
	e2etest.WaitFor(t, "the final result in the dashboard", 30*time.Second, func() bool {
		frame = r.Capture(lanes.DashboardSession)
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
	one := r.RunEnv(e2etest.Context(t), "dashboard", "--view", "backlog")
	if one.Code != 0 || !strings.Contains(one.Stdout, "· finished ·") || !strings.Contains(one.Stdout, "merged 3 / in flight 0") ||
		!strings.Contains(one.Stdout, "■ backlog run finished · exit 0") || strings.Contains(one.Stdout, "›") {
		t.Errorf("dashboard --view backlog: exit %d\n%s%s", one.Code, one.Stdout, one.Stderr)
	}
}

func TestDashboardViewFlag(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	none := r.RunEnv(e2etest.Context(t), "dashboard", "--view", "backlog")
	if none.Code != 0 || !strings.Contains(none.Stdout, "no backlog run on this lane yet") {
		t.Errorf("--view backlog without a run: exit %d\n%s%s", none.Code, none.Stdout, none.Stderr)
	}
	bad := r.RunEnv(e2etest.Context(t), "dashboard", "--view", "issues")
	if bad.Code != 2 || !strings.Contains(bad.Stderr, `--view "issues": want waves or backlog`) {
		t.Errorf("--view issues: exit %d\n%s", bad.Code, bad.Stderr)
	}
	// Without --view the one frame stays the wave view scripts expect.
	if waves := r.RunEnv(e2etest.Context(t), "dashboard"); waves.Code != 0 || strings.Contains(waves.Stdout, "backlog run") {
		t.Errorf("dashboard without --view: exit %d\n%s", waves.Code, waves.Stdout)
	}
}

// doctor names the GitHub token variable of a github backlog source,
// set or not, and never prints its value.
func TestDoctorChecksBacklogToken(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", string(cfg)+"github:\n  owner: acme\n  repo: shop\n  tokenEnv: SHOP_TOKEN\n")
	unset := r.RunEnv(e2etest.Context(t), "doctor")
	if unset.Code != 1 || !strings.Contains(unset.Stdout, "error backlog: github source acme/shop: $SHOP_TOKEN is not set") {
		t.Errorf("doctor without the token: exit %d\n%s", unset.Code, unset.Stdout)
	}
	if !regexp.MustCompile(`(?m)^ok    git: 2\.\d+ \(>= 2\.38`).MatchString(unset.Stdout) {
		t.Errorf("doctor does not report the git version against 2.38:\n%s", unset.Stdout)
	}
	cmd := r.Command(e2etest.Context(t), "doctor")
	cmd.Env = append(append(cmd.Env, r.Env()...), "SHOP_TOKEN=ghp_s3cr3tvalue")
	set := e2etest.RunCmd(t, cmd)
	if !strings.Contains(set.Stdout, "ok    backlog: github source acme/shop, token in $SHOP_TOKEN") {
		t.Errorf("doctor with the token:\n%s", set.Stdout)
	}
	if strings.Contains(set.Stdout+set.Stderr, "s3cr3t") {
		t.Fatalf("doctor printed the token's value:\n%s%s", set.Stdout, set.Stderr)
	}
}
