package backlogcli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// The real claude CLI as every backlog worker, in each output format the
// executor offers, against a fake model API that has it write and commit
// the issue's file with its Bash tool and end with the result marker: the
// supervisor reads the marker from what claude printed (plain text, one
// JSON result, or a stream of JSON events), so each issue merges on its
// first attempt and the final PR is written.
func TestRealClaudeWorkersMergeInEveryOutputFormat(t *testing.T) {
	t.Parallel()
	bin := e2etest.ClaudeBin(t)
	for _, format := range []string{"text", "json", "stream-json"} {
		t.Run(format, func(t *testing.T) { realClaudeRun(t, bin, format) })
	}
}

func realClaudeRun(t *testing.T, bin, format string) {
	r, model, runDir := realClaudeBacklog(t, bin, format, "Files: src/i1/**", "Files: src/i2/**")
	for n := 1; n <= 2; n++ {
		dir := filepath.Join(runDir, "runs", fmt.Sprintf("i%d-a1", n))
		if _, err := os.Stat(filepath.Join(runDir, "runs", fmt.Sprintf("i%d-a2", n))); err == nil {
			t.Errorf("#%d was relaunched: its first run's marker was not read", n)
		}
		var launch struct {
			Argv []string `json:"argv"`
		}
		e2etest.ReadJSONFile(t, filepath.Join(dir, "launch.json"), &launch)
		if argv := strings.Join(launch.Argv, " "); !strings.HasPrefix(argv, bin+" ") || !strings.Contains(argv, "--output-format "+format) {
			t.Errorf("#%d ran %q, want %s with --output-format %s", n, argv, bin, format)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "agent.log"))
		if format != "text" && !strings.Contains(string(log), `"type":"result"`) {
			t.Errorf("#%d's log is not claude's %s output:\n%s", n, format, log)
		}
		realClaudeUsage(t, dir, format)
	}
	if c := strings.Count(model.Requests(), "→ marker"); c != 2 {
		t.Errorf("%d workers reached their final turn, want 2", c)
	}
	// The marker's detail arrives whole: not cut at an escaped newline,
	// nor carrying the JSON around it.
	for _, ev := range e2etest.RunEvents(t, runDir) {
		if want := fmt.Sprintf("wrote src/i%d/done.txt", ev.Issue); ev.Kind == backlog.EvWorkerFinished && (ev.Outcome != backlog.OutcomeReady || ev.Detail != want) {
			t.Errorf("#%d finished %s with detail %q, want ready with %q", ev.Issue, ev.Outcome, ev.Detail, want)
		}
	}
	r.MergedWithFinalPR(runDir, 2)
}

// realClaudeUsage checks the usage the fake API reported reached the run's
// runtime record through the real CLI: claude's result event (json and
// stream-json) carries every request's tokens and the CLI's own cost;
// plain text reports none, so the usage is null, not zeros.
func realClaudeUsage(t *testing.T, dir, format string) {
	t.Helper()
	var rec struct {
		Usage *struct {
			InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens *int64
			CostUSD                                                      *float64 `json:"costUsd"`
			Source                                                       *string
		} `json:"usage"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(dir, "runtime.json"), &rec)
	u := rec.Usage
	if format == "text" {
		if u != nil {
			t.Errorf("%s: text output reports no usage, yet runtime.json has %+v", dir, *u)
		}
		return
	}
	if u == nil || u.InputTokens == nil || u.OutputTokens == nil || u.CacheReadTokens == nil || u.CacheWriteTokens == nil || u.Source == nil {
		t.Fatalf("%s: runtime.json usage %+v, want every figure of claude's result", dir, u)
	}
	// The worker makes at least its two turns, each reporting the fake's figures.
	if *u.InputTokens < 2*e2etest.FakeInputTokens || *u.OutputTokens < 2*e2etest.FakeOutputTokens || *u.CacheReadTokens < 2*e2etest.FakeCacheReadTokens ||
		*u.CacheWriteTokens < 2*e2etest.FakeCacheWriteTokens || *u.Source != "claude result" {
		t.Errorf("%s: usage in %d out %d cache read %d write %d from %s, want at least two turns of the fake's %d/%d/%d/%d from claude's result",
			dir, *u.InputTokens, *u.OutputTokens, *u.CacheReadTokens, *u.CacheWriteTokens, *u.Source,
			e2etest.FakeInputTokens, e2etest.FakeOutputTokens, e2etest.FakeCacheReadTokens, e2etest.FakeCacheWriteTokens)
	}
	if u.CostUSD == nil || *u.CostUSD <= 0 {
		t.Errorf("%s: no cost in %+v", dir, u)
	}
}

// A real claude worker whose first run ends without its marker is
// salvaged: the probe runs the real binary with the worker's own env (so
// it reaches the fake API, not the network), passes, and the relaunch,
// told it resumes, merges.
func TestRealClaudeWorkerSalvageProbesWithTheWorkersEnv(t *testing.T) {
	t.Parallel()
	bin := e2etest.ClaudeBin(t)
	r, model, runDir := realClaudeBacklog(t, bin, "stream-json", "Files: src/i1/**\n\n"+e2etest.ForgetMarker)
	if _, err := os.Stat(filepath.Join(runDir, "runs", "i1-a2")); err != nil {
		t.Fatalf("#1 was not relaunched after its first run ended without a marker: %v", err)
	}
	var outcomes []string
	for _, ev := range e2etest.RunEvents(t, runDir) {
		if ev.Kind == backlog.EvWorkerFinished {
			outcomes = append(outcomes, ev.Outcome)
		}
	}
	if fmt.Sprint(outcomes) != fmt.Sprint([]string{backlog.OutcomeFailed, backlog.OutcomeReady}) {
		t.Errorf("worker outcomes %v, want failed (no marker) then ready", outcomes)
	}
	reqs := model.Requests()
	if !strings.Contains(reqs, "→ no marker") || !strings.Contains(reqs, "→ side query") || !strings.Contains(reqs, "→ marker") {
		t.Errorf("want the first run without a marker, the probe, and the relaunch's marker at the fake API:\n%s", reqs)
	}
	r.MergedWithFinalPR(runDir, 1)
}

// realClaudeBacklog runs `backlog run` over one issue per body (numbered
// from 1) with real claude workers in format against a fresh fake model,
// wants exit 0, and returns the repository, the model and the run's dir.
func realClaudeBacklog(t *testing.T, bin, format string, bodies ...string) (*e2etest.BacklogRepo, *e2etest.FakeModel, string) {
	t.Helper()
	model := e2etest.NewFakeModel(t)
	r := e2etest.NewBacklogRepo(t)
	r.UseClaudeWorkers(bin, model, format)
	var nums []string
	for i, body := range bodies {
		r.Issue(i+1, fmt.Sprintf("Issue %d", i+1), body)
		nums = append(nums, fmt.Sprint(i+1))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model requests:\n%s", model.Requests())
			logs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", "*", "agent.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := r.RunEnv(ctx, "backlog", "run", "--issues", strings.Join(nums, ","), "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	t.Logf("backlog run (%s workers):\n%s", format, run.Stdout)
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*"))
	if len(dirs) != 1 {
		t.Fatalf("%d backlog runs, want 1: %v", len(dirs), dirs)
	}
	return r, model, dirs[0]
}

// The real claude CLI works inside the sandbox every backlog worker runs
// in where bubblewrap does (the tests above run there too): it reaches
// the fake model API on 127.0.0.1, its endpoint, while a second server
// on 127.0.0.1 that no allowlist names receives nothing when the
// model's tool call tries it, directly and through the proxy, and the
// host it tried is in backlog status and the final PR. Its home is the
// sandbox's: the user's SSH key stays out of its reach.
func TestTheRealClaudeCLIWorksInsideTheSandbox(t *testing.T) {
	t.Parallel()
	bin := e2etest.ClaudeBin(t)
	if _, err := sandbox.Usable(context.Background()); err != nil {
		if os.Getenv("SANDBOXTEST_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(other.Close)
	otherHost := strings.TrimPrefix(other.URL, "http://")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("SSH-KEY-CLAUDE-MUST-NOT-READ"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := e2etest.NewFakeModel(t)
	model.Also = fmt.Sprintf(`cat ~/.ssh/id_ed25519 2>/dev/null
curl -s -m 5 %s/ >/dev/null 2>&1
curl -s -m 5 --noproxy '*' %s/ >/dev/null 2>&1
(exec 3<>/dev/tcp/127.0.0.1/%s) 2>/dev/null || true`, other.URL, other.URL, otherHost[strings.LastIndex(otherHost, ":")+1:])
	r := e2etest.NewBacklogRepo(t)
	r.UseClaudeWorkers(bin, model, "stream-json")
	r.Issue(1, "Issue 1", "Files: src/i1/**")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env := append(r.Env(), "HOME="+home, "WAVE_BACKLOG_SANDBOX_READ_ONLY=")
	run := r.RunWith(ctx, env, "backlog", "run", "--issues", "1", "--no-dashboard")
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*"))
	if run.Code != 0 || len(dirs) != 1 {
		logs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", "*", "agent.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
		t.Fatalf("run: exit %d\n%s\n%s\nmodel requests:\n%s", run.Code, run.Stdout, run.Stderr, model.Requests())
	}
	var rec struct {
		Sandbox string `json:"sandbox"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(dirs[0], "runs", "i1-a1", "runtime.json"), &rec)
	if rec.Sandbox != "bubblewrap" {
		t.Errorf("the worker's record says sandbox %q, want bubblewrap", rec.Sandbox)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server no allowlist names received %d requests", n)
	}
	if log, _ := os.ReadFile(filepath.Join(dirs[0], "runs", "i1-a1", "agent.log")); strings.Contains(string(log), "SSH-KEY-CLAUDE-MUST-NOT-READ") {
		t.Errorf("the worker read the user's SSH key:\n%s", log)
	}
	st := r.RunWith(context.Background(), env, "backlog", "status")
	if !strings.Contains(st.Stdout, "blocked host: "+otherHost+" (#1)") {
		t.Errorf("backlog status does not name %s as blocked for #1:\n%s", otherHost, st.Stdout)
	}
	r.MergedWithFinalPR(dirs[0], 1)
	if body := r.FinalPRBody(t); !strings.Contains(body, otherHost) {
		t.Errorf("the final PR does not list the blocked host:\n%s", body)
	}
}

// The real claude CLI, signed in with a subscription, at its session
// limit: the fake API answers 429 with the limit's headers for ten
// seconds. Both workers end on claude's own message (stream-json, the
// exact reset), the run pauses once, spends no salvage, starts nothing
// before the reset, and then the same two workers go on in their
// worktrees and merge, each once.
func TestRealClaudeAtItsUsageLimitPausesTheRunUntilTheReset(t *testing.T) {
	t.Parallel()
	bin := e2etest.ClaudeBin(t)
	model := e2etest.NewFakeModel(t)
	until := time.Now().Add(10 * time.Second)
	model.LimitUntil(until)
	r := e2etest.NewBacklogRepo(t)
	r.UseClaudeSubscriberWorkers(bin, model, "stream-json")
	r.Issue(1, "Issue 1", "Files: src/i1/**")
	r.Issue(2, "Issue 2", "Files: src/i2/**")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model requests:\n%s", model.Requests())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := r.RunEnv(ctx, "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	if !strings.Contains(model.Requests(), "→ usage limit") {
		t.Fatalf("no request met the limit:\n%s", model.Requests())
	}
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*"))
	if len(dirs) != 1 {
		t.Fatalf("%d backlog runs, want 1", len(dirs))
	}
	evs := e2etest.RunEvents(t, dirs[0])
	run2 := backlog.Reduce(evs)
	var pauses, resumes int
	var pauseUntil time.Time
	for _, ev := range evs {
		switch {
		case ev.Kind == backlog.EvUsageLimit && ev.Outcome == backlog.UsagePaused:
			pauses++
			pauseUntil = *ev.Until
		case ev.Kind == backlog.EvUsageLimit && ev.Outcome == backlog.UsageResumed:
			resumes++
		case ev.Kind == backlog.EvWorkerStarted && ev.Attempt == 2 && ev.At.Before(pauseUntil):
			t.Errorf("#%d started again at %s, before the reset %s", ev.Issue, ev.At, pauseUntil)
		}
	}
	if pauses != 1 || resumes != 1 || pauseUntil.Before(until) {
		t.Errorf("%d pauses (until %s), %d ends; want one pause until the API's reset %s", pauses, pauseUntil, resumes, until)
	}
	for n := 1; n <= 2; n++ {
		is := run2.Issues[n]
		if is.Salvages != 0 || is.Attempts != 2 {
			t.Errorf("#%d: %d attempts, %d salvages; want the limited run and one after the reset, no salvage", n, is.Attempts, is.Salvages)
		}
	}
	r.MergedWithFinalPR(dirs[0], 2)
}
