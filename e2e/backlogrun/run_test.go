package backlogrun

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

func TestBacklogEndToEndThroughTheBinary(t *testing.T) {
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	r.Issue(2, "Add a farewell", "Files: src/bye/**")
	r.Issue(3, "Touch the greeting too", "Files: src/greet/extra.go")
	ctx := context.Background()

	plan := r.RunEnv(ctx, "backlog", "plan", "--issues", "1,2,3", "--json")
	if plan.Code != 0 {
		t.Fatalf("plan: %d %s", plan.Code, plan.Stderr)
	}
	var p struct {
		Width  int `json:"width"`
		Groups []struct {
			Issues []int `json:"issues"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(plan.Stdout), &p); err != nil {
		t.Fatalf("plan json: %v\n%s", err, plan.Stdout)
	}
	if p.Width != 2 || len(p.Groups) != 2 || fmt.Sprint(p.Groups[0].Issues) != "[1 3]" {
		t.Fatalf("plan: width %d groups %+v; want #1 and #3 grouped (shared surface), width 2", p.Width, p.Groups)
	}

	run := r.RunEnv(ctx, "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if !strings.Contains(run.Stdout, "tally (merged)") {
		t.Errorf("run output has no tally checkpoint:\n%s", run.Stdout)
	}
	if strings.Contains(run.Stdout, "dashboard:") || r.Capture("dashboard") != "" || !strings.Contains(run.Stdout, "watch a worker: tmux -L ") {
		t.Errorf("--no-dashboard: want no dashboard session, and how to watch a worker:\n%s", run.Stdout)
	}
	st := r.RunEnv(ctx, "backlog", "status", "--json")
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
	if err := json.Unmarshal([]byte(st.Stdout), &v); err != nil {
		t.Fatalf("status json: %v\n%s", err, st.Stdout)
	}
	if v.State != "finished" || v.Tally.Merged != 3 || len(v.Issues) != 3 || v.FinalPR == nil {
		t.Fatalf("status: %+v", v)
	}
}

// TestBacklogKill9AnywhereResumesExactlyOnce kills the supervisor with
// SIGKILL at random moments of a 6-issue run, restarts it until the run
// finishes, and checks nothing happened twice and nothing was lost.
func TestBacklogKill9AnywhereResumesExactlyOnce(t *testing.T) {
	trials := e2etest.Kill9Trials(2)
	for trial := range trials {
		t.Run(fmt.Sprint("trial", trial), func(t *testing.T) { kill9Trial(t, rand.New(rand.NewPCG(uint64(trial), 7)), nil, false) })
	}
}

// The same against GitHub (the fake, with go-github as the real client in
// the binary): no comment or PR is ever made twice, whatever the kill.
func TestBacklogKill9WithGitHubMakesNoDuplicateWrites(t *testing.T) {
	trials := e2etest.Kill9Trials(2)
	for trial := range trials {
		t.Run(fmt.Sprint("trial", trial), func(t *testing.T) {
			gh := forgetest.NewServer(t, "acme", "widgets")
			kill9Trial(t, rand.New(rand.NewPCG(uint64(trial), 11)), gh, false)
		})
	}
}

// The same with a verify step, so merges go through the pipeline
// (backlog.verifyParallel: three candidates verified at once, each on
// top of the ones ahead): nothing merged twice, and every commit the
// wave branch ever pointed at is a merge a verify passed on.
func TestBacklogKill9AnywhereInTheMergePipelineMergesOnlyVerified(t *testing.T) {
	trials := e2etest.Kill9Trials(2)
	for trial := range trials {
		t.Run(fmt.Sprint("trial", trial), func(t *testing.T) { kill9Trial(t, rand.New(rand.NewPCG(uint64(trial), 13)), nil, true) })
	}
}

func kill9Trial(t *testing.T, rng *rand.Rand, gh *forgetest.Server, pipeline bool) {
	r := e2etest.NewBacklogRepo(t)
	for n := 1; n <= 6; n++ {
		body := fmt.Sprintf("Files: part%d/**\n\nlocal-agent: delay=%dms", n, 50+rng.IntN(400))
		if gh != nil {
			gh.AddIssue(backlog.Issue{Number: n, Title: fmt.Sprintf("Issue %d", n), Body: body})
		} else {
			r.Issue(n, fmt.Sprintf("Issue %d", n), body)
		}
	}
	extraEnv := r.Env()
	if gh != nil {
		cfg, _ := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
		r.Write("wave.config.yaml", string(cfg)+fmt.Sprintf("github:\n  owner: acme\n  repo: widgets\n  apiUrl: %s\n", gh.URL))
		extraEnv = append(extraEnv, "GITHUB_TOKEN="+forgetest.Token)
	}
	ctl := filepath.Join(r.Origin, "ctl")
	if pipeline {
		// The verify notes the tree it passed on where the test reads it
		// (outside a sandbox's reach: unconfined); it takes a while, so
		// the kills find verifies under way.
		if err := os.MkdirAll(ctl, 0o755); err != nil {
			t.Fatal(err)
		}
		r.SetBacklogKey(t, `verify: [sh, -c, 'sleep 0.3; echo "$WAVE_ISSUE_NUMBER $WAVE_MERGE_COMMIT $(git rev-parse HEAD^{tree})" >> `+filepath.Join(ctl, "passed")+`']`)
		e2etest.GitIn(t, r.Origin, "config", "core.logAllRefUpdates", "always")
		extraEnv = append(extraEnv, "WAVE_BACKLOG_SANDBOX_MODE=off")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"backlog", "run", "--issues", "1,2,3,4,5,6", "--no-dashboard", "--width", "3"}
	kills := 0
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		evs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "events.jsonl"))
		for _, e := range evs {
			b, _ := os.ReadFile(e)
			t.Logf("%s:\n%s", e, b)
		}
		recs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", "*", "*.json"))
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
		cmd := r.Command(ctx, args...)
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
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*"))
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
		if !gittest.HasPath(r.Origin, run.Info.WaveBranch, "backlog-work/issue-"+fmt.Sprint(n)+".md") {
			t.Errorf("wave branch on origin lacks #%d's work", n)
		}
		// One merge commit per worker branch, never two.
		log := e2etest.GitIn(t, r.Origin, "log", "--merges", "--format=%s", run.Info.WaveBranch)
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
			b, _ := os.ReadFile(filepath.Join(r.Root, ".wave", "backlog-local", fmt.Sprintf("%d.comments.md", n)))
			comments = string(b)
		}
		if c := strings.Count(comments, "wave-orchestrator:claim run="); c != 1 {
			t.Errorf("#%d has %d claim comments, want 1", n, c)
		}
	}
	if !run.Finished || run.Tally().Merged != 6 {
		t.Errorf("run finished=%v tally %+v", run.Finished, run.Tally())
	}
	if pipeline {
		everyWaveTipVerified(t, r, ctl, run, evs, 6)
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
	prs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "backlog-local", "prs", "*"))
	if len(prs) != 1 {
		t.Errorf("%d final PR files, want 1: %v", len(prs), prs)
	}
}

func eventCount(r *e2etest.BacklogRepo) int {
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "events.jsonl"))
	n := 0
	for _, d := range dirs {
		b, _ := os.ReadFile(d)
		n += strings.Count(string(b), "\n")
	}
	return n
}
