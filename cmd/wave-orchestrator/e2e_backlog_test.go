package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// backlogRepo is a scaffolded clone of a bare origin with a local backlog.
type backlogRepo struct {
	*testRepo
	origin string
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newBacklogRepo(t *testing.T) *backlogRepo {
	t.Helper()
	dir := t.TempDir()
	origin, root := filepath.Join(dir, "origin.git"), filepath.Join(dir, "repo")
	gitIn(t, dir, "init", "-q", "--bare", "-b", "main", origin)
	gitIn(t, dir, "clone", "-q", origin, root)
	gitIn(t, root, "config", "user.name", "t")
	gitIn(t, root, "config", "user.email", "t@example.com")
	gitIn(t, root, "checkout", "-q", "-b", "main")
	r := &backlogRepo{testRepo: &testRepo{t: t, root: root}, origin: origin}
	t.Cleanup(r.cleanupTmux)
	if res := r.run(context.Background(), "init"); res.code != 0 {
		t.Fatalf("init: %d %s", res.code, res.stderr)
	}
	gitIn(t, root, "add", "-A")
	gitIn(t, root, "commit", "-q", "-m", "scaffold")
	gitIn(t, root, "push", "-q", "origin", "main")
	gitIn(t, root, "remote", "set-head", "origin", "main")
	return r
}

func (r *backlogRepo) issue(n int, title, body string) {
	r.write(fmt.Sprintf("docs/backlog/%d-issue.md", n), fmt.Sprintf("---\ntitle: %q\n---\n%s\n", title, body))
}

func (r *backlogRepo) env() []string {
	return []string{"XDG_STATE_HOME=" + filepath.Join(filepath.Dir(r.root), "state"),
		"WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS=200", "WAVE_RUNTIME_TERMINATE_GRACE_MS=500",
		// A run with only questions left ends at once (exit 43) unless a
		// test says otherwise (a later entry wins).
		"WAVE_BACKLOG_INPUT_WAIT_MINUTES=0"}
}

func (r *backlogRepo) runEnv(ctx context.Context, args ...string) result {
	r.t.Helper()
	return r.runWith(ctx, r.env(), args...)
}

func TestBacklogEndToEndThroughTheBinary(t *testing.T) {
	r := newBacklogRepo(t)
	r.issue(1, "Add a greeting", "Files: src/greet/**")
	r.issue(2, "Add a farewell", "Files: src/bye/**")
	r.issue(3, "Touch the greeting too", "Files: src/greet/extra.go")
	ctx := context.Background()

	plan := r.runEnv(ctx, "backlog", "plan", "--issues", "1,2,3", "--json")
	if plan.code != 0 {
		t.Fatalf("plan: %d %s", plan.code, plan.stderr)
	}
	var p struct {
		Width  int `json:"width"`
		Groups []struct {
			Issues []int `json:"issues"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(plan.stdout), &p); err != nil {
		t.Fatalf("plan json: %v\n%s", err, plan.stdout)
	}
	if p.Width != 2 || len(p.Groups) != 2 || fmt.Sprint(p.Groups[0].Issues) != "[1 3]" {
		t.Fatalf("plan: width %d groups %+v; want #1 and #3 grouped (shared surface), width 2", p.Width, p.Groups)
	}

	run := r.runEnv(ctx, "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	if run.code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	if !strings.Contains(run.stdout, "tally (merged)") {
		t.Errorf("run output has no tally checkpoint:\n%s", run.stdout)
	}
	if strings.Contains(run.stdout, "dashboard:") || r.capture("dashboard") != "" || !strings.Contains(run.stdout, "watch a worker: tmux -L ") {
		t.Errorf("--no-dashboard: want no dashboard session, and how to watch a worker:\n%s", run.stdout)
	}
	st := r.runEnv(ctx, "backlog", "status", "--json")
	var v struct {
		State  string        `json:"state"`
		Tally  backlog.Tally `json:"tally"`
		Issues []struct {
			Number int    `json:"number"`
			State  string `json:"state"`
			Branch string `json:"branch"`
		} `json:"issues"`
		FinalPR *backlog.PRRef `json:"finalPr"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &v); err != nil {
		t.Fatalf("status json: %v\n%s", err, st.stdout)
	}
	if v.State != "finished" || v.Tally.Merged != 3 || len(v.Issues) != 3 || v.FinalPR == nil {
		t.Fatalf("status: %+v", v)
	}
}

// TestBacklogKill9AnywhereResumesExactlyOnce kills the supervisor with
// SIGKILL at random moments of a 6-issue run, restarts it until the run
// finishes, and checks nothing happened twice and nothing was lost.
func TestBacklogKill9AnywhereResumesExactlyOnce(t *testing.T) {
	trials := kill9Trials(2)
	for trial := range trials {
		t.Run(fmt.Sprint("trial", trial), func(t *testing.T) { kill9Trial(t, rand.New(rand.NewPCG(uint64(trial), 7)), nil) })
	}
}

// The same against GitHub (the fake, with go-github as the real client in
// the binary): no comment or PR is ever made twice, whatever the kill.
func TestBacklogKill9WithGitHubMakesNoDuplicateWrites(t *testing.T) {
	trials := kill9Trials(2)
	for trial := range trials {
		t.Run(fmt.Sprint("trial", trial), func(t *testing.T) {
			gh := forgetest.NewServer(t, "acme", "widgets")
			kill9Trial(t, rand.New(rand.NewPCG(uint64(trial), 11)), gh)
		})
	}
}

// kill9Trials is n, 1 with -short, or $WAVE_KILL9_TRIALS for a soak run.
func kill9Trials(n int) int {
	if v, err := strconv.Atoi(os.Getenv("WAVE_KILL9_TRIALS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 1
	}
	return n
}

func kill9Trial(t *testing.T, rng *rand.Rand, gh *forgetest.Server) {
	r := newBacklogRepo(t)
	for n := 1; n <= 6; n++ {
		body := fmt.Sprintf("Files: part%d/**\n\nlocal-agent: delay=%dms", n, 50+rng.IntN(400))
		if gh != nil {
			gh.AddIssue(backlog.Issue{Number: n, Title: fmt.Sprintf("Issue %d", n), Body: body})
		} else {
			r.issue(n, fmt.Sprintf("Issue %d", n), body)
		}
	}
	extraEnv := r.env()
	if gh != nil {
		cfg, _ := os.ReadFile(filepath.Join(r.root, "wave.config.yaml"))
		r.write("wave.config.yaml", string(cfg)+fmt.Sprintf("github:\n  owner: acme\n  repo: widgets\n  apiUrl: %s\n", gh.URL))
		extraEnv = append(extraEnv, "GITHUB_TOKEN="+forgetest.Token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"backlog", "run", "--issues", "1,2,3,4,5,6", "--no-dashboard", "--width", "3"}
	kills := 0
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		evs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*", "events.jsonl"))
		for _, e := range evs {
			b, _ := os.ReadFile(e)
			t.Logf("%s:\n%s", e, b)
		}
		recs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*", "runs", "*", "*.json"))
		for _, e := range recs {
			b, _ := os.ReadFile(e)
			if !strings.HasSuffix(e, "launch.json") {
				t.Logf("%s:\n%s", e, b)
			}
		}
	})
	for attempt := 0; ; attempt++ {
		if attempt > 30 {
			t.Fatal("the run did not finish after 30 restarts")
		}
		cmd := r.command(ctx, args...)
		cmd.Env = append(cmd.Env, extraEnv...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("life %d output:\n%s", attempt, out.String())
			}
		})
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if kills < 4 {
			// Kill after a random number of new events (or a random moment).
			before := eventCount(r)
			want := before + 1 + rng.IntN(25)
			deadline := time.Now().Add(time.Duration(200+rng.IntN(3000)) * time.Millisecond)
			for eventCount(r) < want && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			kills++
			t.Logf("kill -9 #%d after %d events", kills, eventCount(r))
			continue
		}
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() != 0 {
			t.Fatalf("final run exited %d", ee.ExitCode())
		}
		break
	}
	dirs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*"))
	if len(dirs) != 1 {
		t.Fatalf("%d backlog runs, want exactly 1 (every restart resumes it): %v", len(dirs), dirs)
	}
	evs, bad, err := jsonfile.ReadLines[backlog.Event](filepath.Join(dirs[0], "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 1 {
		t.Errorf("%d torn event lines (at most one per kill is possible, and only at the end of a life): %v", len(bad), bad)
	}
	merged := map[int]int{}
	for _, ev := range evs {
		if ev.Kind == backlog.EvMerged {
			merged[ev.Issue]++
		}
	}
	run := backlog.Reduce(evs)
	for n := 1; n <= 6; n++ {
		if merged[n] != 1 {
			t.Errorf("#%d merged %d times, want exactly once", n, merged[n])
		}
		if _, err := exec.Command("git", "--git-dir", r.origin, "cat-file", "-e", run.Info.WaveBranch+":backlog-work/issue-"+fmt.Sprint(n)+".md").Output(); err != nil {
			t.Errorf("wave branch on origin lacks #%d's work", n)
		}
		// One merge commit per worker branch, never two.
		log := gitIn(t, r.origin, "log", "--merges", "--format=%s", run.Info.WaveBranch)
		if c := strings.Count(log, fmt.Sprintf("Merge #%d:", n)); c != 1 {
			t.Errorf("#%d has %d merge commits on the wave branch, want 1", n, c)
		}
		// Each marker comment exists once.
		var comments string
		if gh != nil {
			for _, c := range gh.Comments(n) {
				comments += c.Body + "\n"
			}
		} else {
			b, _ := os.ReadFile(filepath.Join(r.root, ".wave", "backlog-local", fmt.Sprintf("%d.comments.md", n)))
			comments = string(b)
		}
		if c := strings.Count(comments, "wave-orchestrator:claim run="); c != 1 {
			t.Errorf("#%d has %d claim comments, want 1", n, c)
		}
	}
	if !run.Finished || run.Tally().Merged != 6 {
		t.Errorf("run finished=%v tally %+v", run.Finished, run.Tally())
	}
	if gh != nil {
		heads := map[string]int{}
		for _, pr := range gh.PRs() {
			heads[pr.Head+"→"+pr.Base]++
		}
		for k, c := range heads {
			if c != 1 {
				t.Errorf("%d PRs %s, want 1", c, k)
			}
		}
		if len(heads) != 7 {
			t.Errorf("%d distinct PRs (%v), want 6 worker PRs and one final PR", len(heads), heads)
		}
		return
	}
	prs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "backlog-local", "prs", "*"))
	if len(prs) != 1 {
		t.Errorf("%d final PR files, want 1: %v", len(prs), prs)
	}
}

func eventCount(r *backlogRepo) int {
	dirs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*", "events.jsonl"))
	n := 0
	for _, d := range dirs {
		b, _ := os.ReadFile(d)
		n += strings.Count(string(b), "\n")
	}
	return n
}
