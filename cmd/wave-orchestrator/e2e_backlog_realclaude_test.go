package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// claudeBin is the real claude CLI named by $CLAUDETEST_BIN (not WAVE_*:
// the binary warns about WAVE_* variables it does not know). Without it
// the test skips, unless $CLAUDETEST_REQUIRED asks for it to fail.
func claudeBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CLAUDETEST_BIN")
	if bin == "" {
		msg := "set CLAUDETEST_BIN to a claude CLI to run this test, e.g. " +
			"npm install --prefix /tmp/claude-cli @anthropic-ai/claude-code && " +
			"CLAUDETEST_BIN=/tmp/claude-cli/node_modules/.bin/claude go test ./cmd/wave-orchestrator -run TestRealClaude"
		if os.Getenv("CLAUDETEST_REQUIRED") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("CLAUDETEST_BIN=%s --version: %v\n%s", bin, err, out)
	}
	t.Logf("claude %s", strings.TrimSpace(string(out)))
	return bin
}

// workerExecutor matches the scaffold's backlog.executor block (id: local).
var workerExecutor = regexp.MustCompile(`(?m)^  executor:\n    id: local.*$`)

// useClaudeWorkers points backlog.executor at the real claude binary,
// talking to model in the given output format, offline: its own config
// directory, no telemetry or update checks, as root only in a sandbox.
func (r *backlogRepo) useClaudeWorkers(bin string, model *fakeModel, format string) {
	r.t.Helper()
	cfg, err := os.ReadFile(filepath.Join(r.root, "wave.config.yaml"))
	if err != nil {
		r.t.Fatal(err)
	}
	keys := [][2]string{
		{"id", "claude"},
		{"claude.command", bin},
		{"claude.output_format", format},
		// Through the generated --settings file, which the real binary must accept.
		{"claude.settings_json", `{"permissions":{"defaultMode":"bypassPermissions"}}`},
		{"env.ANTHROPIC_BASE_URL", model.URL},
		{"env.ANTHROPIC_API_KEY", "test"},
		{"env.IS_SANDBOX", "1"},
		{"env.CLAUDE_CONFIG_DIR", filepath.Join(filepath.Dir(r.root), "claude-config")},
		{"env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
		{"env.DISABLE_AUTOUPDATER", "1"},
	}
	var b strings.Builder
	b.WriteString("  executor:")
	for _, kv := range keys {
		v, _ := json.Marshal(kv[1]) // a JSON string is a YAML string
		fmt.Fprintf(&b, "\n    %s: %s", kv[0], v)
	}
	if !workerExecutor.Match(cfg) {
		r.t.Fatalf("wave.config.yaml has no scaffolded backlog.executor block:\n%s", cfg)
	}
	r.write("wave.config.yaml", workerExecutor.ReplaceAllLiteralString(string(cfg), b.String()))
}

// The real claude CLI as every backlog worker, in each output format the
// executor offers, against a fake model API that has it write and commit
// the issue's file with its Bash tool and end with the result marker: the
// supervisor reads the marker from what claude printed (plain text, one
// JSON result, or a stream of JSON events), so each issue merges on its
// first attempt and the final PR is written.
func TestRealClaudeWorkersMergeInEveryOutputFormat(t *testing.T) {
	bin := claudeBin(t)
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
		readJSONFile(t, filepath.Join(dir, "launch.json"), &launch)
		if argv := strings.Join(launch.Argv, " "); !strings.HasPrefix(argv, bin+" ") || !strings.Contains(argv, "--output-format "+format) {
			t.Errorf("#%d ran %q, want %s with --output-format %s", n, argv, bin, format)
		}
		log, _ := os.ReadFile(filepath.Join(dir, "agent.log"))
		if format != "text" && !strings.Contains(string(log), `"type":"result"`) {
			t.Errorf("#%d's log is not claude's %s output:\n%s", n, format, log)
		}
		realClaudeUsage(t, dir, format)
	}
	if c := strings.Count(model.requests(), "→ marker"); c != 2 {
		t.Errorf("%d workers reached their final turn, want 2", c)
	}
	// The marker's detail arrives whole: not cut at an escaped newline,
	// nor carrying the JSON around it.
	for _, ev := range runEvents(t, runDir) {
		if want := fmt.Sprintf("wrote src/i%d/done.txt", ev.Issue); ev.Kind == backlog.EvWorkerFinished && (ev.Outcome != backlog.OutcomeReady || ev.Detail != want) {
			t.Errorf("#%d finished %s with detail %q, want ready with %q", ev.Issue, ev.Outcome, ev.Detail, want)
		}
	}
	r.mergedWithFinalPR(runDir, 2)
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
	readJSONFile(t, filepath.Join(dir, "runtime.json"), &rec)
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
	if *u.InputTokens < 2*fakeInputTokens || *u.OutputTokens < 2*fakeOutputTokens || *u.CacheReadTokens < 2*fakeCacheReadTokens ||
		*u.CacheWriteTokens < 2*fakeCacheWriteTokens || *u.Source != "claude result" {
		t.Errorf("%s: usage in %d out %d cache read %d write %d from %s, want at least two turns of the fake's %d/%d/%d/%d from claude's result",
			dir, *u.InputTokens, *u.OutputTokens, *u.CacheReadTokens, *u.CacheWriteTokens, *u.Source,
			fakeInputTokens, fakeOutputTokens, fakeCacheReadTokens, fakeCacheWriteTokens)
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
	bin := claudeBin(t)
	r, model, runDir := realClaudeBacklog(t, bin, "stream-json", "Files: src/i1/**\n\n"+forgetMarker)
	if _, err := os.Stat(filepath.Join(runDir, "runs", "i1-a2")); err != nil {
		t.Fatalf("#1 was not relaunched after its first run ended without a marker: %v", err)
	}
	var outcomes []string
	for _, ev := range runEvents(t, runDir) {
		if ev.Kind == backlog.EvWorkerFinished {
			outcomes = append(outcomes, ev.Outcome)
		}
	}
	if fmt.Sprint(outcomes) != fmt.Sprint([]string{backlog.OutcomeFailed, backlog.OutcomeReady}) {
		t.Errorf("worker outcomes %v, want failed (no marker) then ready", outcomes)
	}
	reqs := model.requests()
	if !strings.Contains(reqs, "→ no marker") || !strings.Contains(reqs, "→ side query") || !strings.Contains(reqs, "→ marker") {
		t.Errorf("want the first run without a marker, the probe, and the relaunch's marker at the fake API:\n%s", reqs)
	}
	r.mergedWithFinalPR(runDir, 1)
}

// realClaudeBacklog runs `backlog run` over one issue per body (numbered
// from 1) with real claude workers in format against a fresh fake model,
// wants exit 0, and returns the repository, the model and the run's dir.
func realClaudeBacklog(t *testing.T, bin, format string, bodies ...string) (*backlogRepo, *fakeModel, string) {
	t.Helper()
	model := newFakeModel(t)
	r := newBacklogRepo(t)
	r.useClaudeWorkers(bin, model, format)
	var nums []string
	for i, body := range bodies {
		r.issue(i+1, fmt.Sprintf("Issue %d", i+1), body)
		nums = append(nums, fmt.Sprint(i+1))
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("model requests:\n%s", model.requests())
			logs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*", "runs", "*", "agent.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	run := r.runEnv(ctx, "backlog", "run", "--issues", strings.Join(nums, ","), "--no-dashboard")
	if run.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	t.Logf("backlog run (%s workers):\n%s", format, run.stdout)
	dirs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*"))
	if len(dirs) != 1 {
		t.Fatalf("%d backlog runs, want 1: %v", len(dirs), dirs)
	}
	return r, model, dirs[0]
}

func runEvents(t *testing.T, runDir string) []backlog.Event {
	t.Helper()
	evs, _, err := jsonfile.ReadLines[backlog.Event](filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// mergedWithFinalPR: the run finished with issues 1..n merged, each one's
// file on the wave branch at origin, and one final PR file naming them.
func (r *backlogRepo) mergedWithFinalPR(runDir string, n int) {
	t := r.t
	t.Helper()
	st := r.runEnv(context.Background(), "backlog", "status", "--json")
	var v struct {
		State   string         `json:"state"`
		Tally   backlog.Tally  `json:"tally"`
		FinalPR *backlog.PRRef `json:"finalPr"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &v); err != nil {
		t.Fatalf("status json: %v\n%s", err, st.stdout)
	}
	if v.State != "finished" || v.Tally.Merged != n || v.FinalPR == nil {
		t.Fatalf("status: %+v, want finished with %d merged and a final PR", v, n)
	}
	wave := backlog.Reduce(runEvents(t, runDir)).Info.WaveBranch
	prs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "backlog-local", "prs", "*"))
	if len(prs) != 1 {
		t.Fatalf("%d final PR files, want 1: %v", len(prs), prs)
	}
	body, _ := os.ReadFile(prs[0])
	for i := 1; i <= n; i++ {
		path := fmt.Sprintf("src/i%d/done.txt", i)
		if _, err := exec.Command("git", "--git-dir", r.origin, "cat-file", "-e", wave+":"+path).Output(); err != nil {
			t.Errorf("the wave branch %s on origin lacks #%d's %s", wave, i, path)
		}
		if !strings.Contains(string(body), fmt.Sprintf("Closes #%d", i)) {
			t.Errorf("the final PR does not close #%d:\n%s", i, body)
		}
	}
}
