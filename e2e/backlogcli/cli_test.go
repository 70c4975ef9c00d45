package backlogcli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// What `backlog` says to a user's mistakes before it changes anything:
// a clear message and the usage exit code, never an empty run, a raw git
// line or a stat error.

func TestBacklogRunRefusesAnIssueThatDoesNotExist(t *testing.T) {
	t.Parallel()
	for _, source := range []string{"local", "github"} {
		t.Run(source, func(t *testing.T) {
			r := e2etest.NewBacklogRepo(t)
			env, where := r.Env(), "docs/backlog"
			if source == "github" {
				gh := forgetest.NewServer(t, "acme", "widgets")
				gh.AddIssue(backlog.Issue{Number: 1, Title: "Real", Body: "Files: a/**"})
				env, where = r.UseGitHub(gh), "acme/widgets on GitHub"
			} else {
				r.Issue(1, "Real", "Files: a/**")
			}
			res := r.RunWith(context.Background(), env, "backlog", "run", "--issues", "1,99", "--no-dashboard")
			if want := "no issue #99 in " + where; res.Code != 2 || !strings.Contains(res.Stderr, want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant exit 2 saying %q", res.Code, res.Stderr, want)
			}
			if runs := r.BacklogRuns(); len(runs) != 0 {
				t.Errorf("a run was created for a missing issue: %v", runs)
			}
			if refs := r.OriginRefs(t, "refs/heads/"); strings.Contains(refs, "wave") {
				t.Errorf("origin got refs for a refused run:\n%s", refs)
			}
		})
	}
}

func TestBacklogWidthOutOfRangeIsAUsageError(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "One", "Files: a/**")
	for _, cmd := range []string{"plan", "run"} {
		for _, w := range []string{"0", "-1"} {
			args := []string{"backlog", cmd, "--issues", "1", "--width", w}
			if cmd == "run" {
				args = append(args, "--no-dashboard")
			}
			res := r.RunEnv(context.Background(), args...)
			if res.Code != 2 || !strings.Contains(res.Stderr, "must be 1 or more") {
				t.Errorf("backlog %s --width %s: exit %d, stderr:\n%s\nwant exit 2 naming the allowed range", cmd, w, res.Code, res.Stderr)
			}
		}
	}
	if runs := r.BacklogRuns(); len(runs) != 0 {
		t.Errorf("a run was created with a bad width: %v", runs)
	}
}

// TestBacklogStopOnRequestExitsZero: a pause someone asked for is not a
// failure; the supervisor says how to resume.
func TestBacklogStopOnRequestExitsZero(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	out, err := r.PauseAHangingRun(t)
	if err != nil {
		t.Fatalf("the stopped supervisor: %v, want exit 0 (a pause is not a failure)", err)
	}
	if !strings.Contains(out, "paused on request") || !strings.Contains(out, "`backlog run` resumes") {
		t.Errorf("output does not say it paused and how to resume:\n%s", out)
	}
}

func TestBacklogWithoutOriginSaysSo(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "One", "Files: a/**")
	e2etest.GitIn(t, r.Root, "remote", "remove", "origin")
	for _, args := range [][]string{{"backlog", "plan", "--issues", "1"}, {"backlog", "run", "--issues", "1", "--no-dashboard"}} {
		res := r.RunEnv(context.Background(), args...)
		if res.Code == 0 || !strings.Contains(res.Stderr, "backlog mode needs a remote named origin (claims are refs there)") || strings.Contains(res.Stderr, "fatal:") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant the origin message and no raw git lines", args, res.Code, res.Stderr)
		}
	}
	if runs := r.BacklogRuns(); len(runs) != 0 {
		t.Errorf("a run was created without an origin: %v", runs)
	}
}

// TestBacklogRunWarnsAboutUnpushedBaseCommits: the wave branch is cut
// from origin's base, so local commits on the base are not in it; say so.
func TestBacklogRunWarnsAboutUnpushedBaseCommits(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "One", "Files: a/**")
	e2etest.GitIn(t, r.Root, "add", "-A")
	e2etest.GitIn(t, r.Root, "commit", "-q", "-m", "the issue, not pushed")
	e2etest.GitIn(t, r.Root, "push", "-q", "origin", "main")
	e2etest.GitIn(t, r.Root, "commit", "-q", "--allow-empty", "-m", "local only")
	res := r.RunEnv(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "1 commit(s) on your local main are not on origin/main") || !strings.Contains(res.Stderr, "leaves them out") {
		t.Errorf("no warning about the unpushed commit:\n%s", res.Stderr)
	}
	clean := e2etest.NewBacklogRepo(t)
	clean.Issue(1, "One", "Files: a/**")
	if res := clean.RunEnv(context.Background(), "backlog", "run", "--issues", "1", "--no-dashboard"); res.Code != 0 || strings.Contains(res.Stderr, "not on origin/") {
		t.Errorf("pushed base: exit %d, stderr:\n%s\nwant no warning", res.Code, res.Stderr)
	}
}

// TestBacklogPlanAfterPlainInitSaysHowToAddIssues: plain `init` makes no
// docs/backlog; the first `backlog plan` says how to add issues.
func TestBacklogPlanAfterPlainInitSaysHowToAddIssues(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	if _, err := os.Stat(filepath.Join(r.Root, "docs", "backlog")); !os.IsNotExist(err) {
		t.Fatalf("plain init made docs/backlog (%v); this test needs it absent", err)
	}
	res := r.RunEnv(context.Background(), "backlog", "plan", "--issues", "1")
	if res.Code == 0 || strings.Contains(res.Stderr, "stat ") ||
		!strings.Contains(res.Stderr, "docs/backlog/<n>-<slug>.md") || !strings.Contains(res.Stderr, "github.owner") {
		t.Errorf("exit %d, stderr:\n%s\nwant how to add issues (docs/backlog/ or a github source), no raw stat error", res.Code, res.Stderr)
	}
}

// After `backlog stop` paused a run, `backlog status` says what stop
// said: paused, its worker stopped, nothing in flight.
func TestBacklogStatusAfterAStopSaysPaused(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	if _, err := r.PauseAHangingRun(t); err != nil {
		t.Fatalf("the stopped supervisor: %v", err)
	}
	v := r.Status(t)
	if v.State != "paused" || v.Tally.InFlight != 0 || v.Tally.Stopped != 1 {
		t.Fatalf("status --json after stop: state %s tally %+v, want paused with the worker stopped", v.State, v.Tally)
	}
	res := r.RunEnv(context.Background(), "backlog", "status")
	if !strings.Contains(res.Stdout, "(paused)") || !strings.Contains(res.Stdout, "in flight 0") || !strings.Contains(res.Stdout, "stopped 1") {
		t.Fatalf("backlog status after stop:\n%s", res.Stdout)
	}
}
