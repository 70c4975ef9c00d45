package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// What `backlog` says to a user's mistakes before it changes anything:
// a clear message and the usage exit code, never an empty run, a raw git
// line or a stat error.

// backlogRuns lists the lane's backlog run directories.
func (r *backlogRepo) backlogRuns() []string {
	dirs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*"))
	return dirs
}

// useGitHub points the repository's backlog at a fake GitHub and returns
// the environment the binary needs for it.
func (r *backlogRepo) useGitHub(gh *forgetest.Server) []string {
	cfg, err := os.ReadFile(filepath.Join(r.root, "wave.config.yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.write("wave.config.yaml", string(cfg)+fmt.Sprintf("github:\n  owner: acme\n  repo: widgets\n  apiUrl: %s\n", gh.URL))
	return append(r.env(), "GITHUB_TOKEN="+forgetest.Token)
}

func TestBacklogRunRefusesAnIssueThatDoesNotExist(t *testing.T) {
	for _, source := range []string{"local", "github"} {
		t.Run(source, func(t *testing.T) {
			r := newBacklogRepo(t)
			env, where := r.env(), "docs/backlog"
			if source == "github" {
				gh := forgetest.NewServer(t, "acme", "widgets")
				gh.AddIssue(backlog.Issue{Number: 1, Title: "Real", Body: "Files: a/**"})
				env, where = r.useGitHub(gh), "acme/widgets on GitHub"
			} else {
				r.issue(1, "Real", "Files: a/**")
			}
			res := r.runWith(context.Background(), env, "backlog", "run", "--issues", "1,99", "--no-dashboard")
			if want := "no issue #99 in " + where; res.code != 2 || !strings.Contains(res.stderr, want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 saying %q", res.code, res.stderr, want)
			}
			if runs := r.backlogRuns(); len(runs) != 0 {
				t.Errorf("a run was created for a missing issue: %v", runs)
			}
			if refs := r.originRefs(t, "refs/heads/"); strings.Contains(refs, "wave") {
				t.Errorf("origin got refs for a refused run:\n%s", refs)
			}
		})
	}
}

func TestBacklogWidthOutOfRangeIsAUsageError(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "One", "Files: a/**")
	for _, cmd := range []string{"plan", "run"} {
		for _, w := range []string{"0", "-1"} {
			args := []string{"backlog", cmd, "--issues", "1", "--width", w}
			if cmd == "run" {
				args = append(args, "--no-dashboard")
			}
			res := r.runEnv(context.Background(), args...)
			if res.code != 2 || !strings.Contains(res.stderr, "must be 1 or more") {
				t.Errorf("backlog %s --width %s: exit %d, stderr:\n%s\nwant exit 2 naming the allowed range", cmd, w, res.code, res.stderr)
			}
		}
	}
	if runs := r.backlogRuns(); len(runs) != 0 {
		t.Errorf("a run was created with a bad width: %v", runs)
	}
}

// TestBacklogStopOnRequestExitsZero: a pause someone asked for is not a
// failure; the supervisor says how to resume.
func TestBacklogStopOnRequestExitsZero(t *testing.T) {
	r := newBacklogRepo(t)
	out, err := r.pauseAHangingRun(t)
	if err != nil {
		t.Fatalf("the stopped supervisor: %v, want exit 0 (a pause is not a failure)", err)
	}
	if !strings.Contains(out, "paused on request") || !strings.Contains(out, "`backlog run` resumes") {
		t.Errorf("output does not say it paused and how to resume:\n%s", out)
	}
}

// pauseAHangingRun starts a run of one issue whose worker hangs, waits
// for the worker, asks `backlog stop`, and returns the supervisor's output
// and how it exited.
func (r *backlogRepo) pauseAHangingRun(t *testing.T) (string, error) {
	t.Helper()
	r.issue(1, "Works for a long time", "Files: a/**\n\nlocal-agent: hang")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := &lives{r: r, args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"}}
	t.Cleanup(func() { l.dump(t) })
	run := l.start(ctx, "")
	waitFor(t, "the worker to start", time.Minute, func() bool {
		v, err := r.tryStatus()
		return err == nil && v.Tally.InFlight == 1
	})
	if res := r.runEnv(ctx, "backlog", "stop"); res.code != 0 {
		t.Fatalf("stop: %d %s", res.code, res.stderr)
	}
	err := run.Wait()
	return l.outs[0].String(), err
}

func TestBacklogWithoutOriginSaysSo(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "One", "Files: a/**")
	gitIn(t, r.root, "remote", "remove", "origin")
	for _, args := range [][]string{{"backlog", "plan", "--issues", "1"}, {"backlog", "run", "--issues", "1", "--no-dashboard"}} {
		res := r.runEnv(context.Background(), args...)
		if res.code == 0 || !strings.Contains(res.stderr, "backlog mode needs a remote named origin (claims are refs there)") || strings.Contains(res.stderr, "fatal:") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant the origin message and no raw git lines", args, res.code, res.stderr)
		}
	}
	if runs := r.backlogRuns(); len(runs) != 0 {
		t.Errorf("a run was created without an origin: %v", runs)
	}
}

// TestBacklogRunWarnsAboutUnpushedBaseCommits: the wave branch is cut
// from origin's base, so local commits on the base are not in it; say so.
func TestBacklogRunWarnsAboutUnpushedBaseCommits(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "One", "Files: a/**")
	gitIn(t, r.root, "add", "-A")
	gitIn(t, r.root, "commit", "-q", "-m", "the issue, not pushed")
	gitIn(t, r.root, "push", "-q", "origin", "main")
	gitIn(t, r.root, "commit", "-q", "--allow-empty", "-m", "local only")
	res := r.runEnv(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard")
	if res.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, "1 commit(s) on your local main are not on origin/main") || !strings.Contains(res.stderr, "leaves them out") {
		t.Errorf("no warning about the unpushed commit:\n%s", res.stderr)
	}
	clean := newBacklogRepo(t)
	clean.issue(1, "One", "Files: a/**")
	if res := clean.runEnv(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard"); res.code != 0 || strings.Contains(res.stderr, "not on origin/") {
		t.Errorf("pushed base: exit %d, stderr:\n%s\nwant no warning", res.code, res.stderr)
	}
}

// TestBacklogPlanAfterPlainInitSaysHowToAddIssues: plain `init` makes no
// docs/backlog; the first `backlog plan` says how to add issues.
func TestBacklogPlanAfterPlainInitSaysHowToAddIssues(t *testing.T) {
	r := newBacklogRepo(t)
	if _, err := os.Stat(filepath.Join(r.root, "docs", "backlog")); !os.IsNotExist(err) {
		t.Fatalf("plain init made docs/backlog (%v); this test needs it absent", err)
	}
	res := r.runEnv(context.Background(), "backlog", "plan", "--issues", "1")
	if res.code == 0 || strings.Contains(res.stderr, "stat ") ||
		!strings.Contains(res.stderr, "docs/backlog/<n>-<slug>.md") || !strings.Contains(res.stderr, "github.owner") {
		t.Errorf("exit %d, stderr:\n%s\nwant how to add issues (docs/backlog/ or a github source), no raw stat error", res.code, res.stderr)
	}
}
