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
	model := newFakeModel(t)
	r := newBacklogRepo(t)
	r.useClaudeWorkers(bin, model, format)
	r.issue(1, "Add a greeting", "Files: src/i1/**")
	r.issue(2, "Add a farewell", "Files: src/i2/**")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
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

	run := r.runEnv(ctx, "backlog", "run", "--issues", "1,2", "--no-dashboard")
	if run.code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	t.Logf("backlog run (%s workers):\n%s", format, run.stdout)
	if strings.Contains(run.stdout, "without a [backlog-result] marker") {
		t.Errorf("the supervisor missed a worker's marker in %s output:\n%s", format, run.stdout)
	}
	dirs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "lanes", "main", "backlog", "*"))
	if len(dirs) != 1 {
		t.Fatalf("%d backlog runs, want 1: %v", len(dirs), dirs)
	}
	st := r.runEnv(ctx, "backlog", "status", "--json")
	var v struct {
		State   string         `json:"state"`
		Tally   backlog.Tally  `json:"tally"`
		FinalPR *backlog.PRRef `json:"finalPr"`
		Wave    string         `json:"waveBranch"`
	}
	if err := json.Unmarshal([]byte(st.stdout), &v); err != nil {
		t.Fatalf("status json: %v\n%s", err, st.stdout)
	}
	if v.State != "finished" || v.Tally.Merged != 2 || v.FinalPR == nil {
		t.Fatalf("status: %+v, want finished with 2 merged and a final PR\n%s", v, run.stdout)
	}
	for n := 1; n <= 2; n++ {
		runDir := filepath.Join(dirs[0], "runs", fmt.Sprintf("i%d-a1", n))
		if _, err := os.Stat(filepath.Join(dirs[0], "runs", fmt.Sprintf("i%d-a2", n))); err == nil {
			t.Errorf("#%d was relaunched: its first run's marker was not read", n)
		}
		var launch struct {
			Argv []string `json:"argv"`
		}
		readJSONFile(t, filepath.Join(runDir, "launch.json"), &launch)
		if argv := strings.Join(launch.Argv, " "); !strings.HasPrefix(argv, bin+" ") || !strings.Contains(argv, "--output-format "+format) {
			t.Errorf("#%d ran %q, want %s with --output-format %s", n, argv, bin, format)
		}
		log, _ := os.ReadFile(filepath.Join(runDir, "agent.log"))
		if format != "text" && !strings.Contains(string(log), `"type":"result"`) {
			t.Errorf("#%d's log is not claude's %s output:\n%s", n, format, log)
		}
	}
	if c := strings.Count(model.requests(), "→ marker"); c != 2 {
		t.Errorf("%d workers reached their final turn, want 2", c)
	}
	// The marker's detail arrives whole: not cut at an escaped newline,
	// nor carrying the JSON around it.
	evs, _, err := jsonfile.ReadLines[backlog.Event](filepath.Join(dirs[0], "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if want := fmt.Sprintf("wrote src/i%d/done.txt", ev.Issue); ev.Kind == backlog.EvWorkerFinished && (ev.Outcome != backlog.OutcomeReady || ev.Detail != want) {
			t.Errorf("#%d finished %s with detail %q, want ready with %q", ev.Issue, ev.Outcome, ev.Detail, want)
		}
	}
	wave := backlog.Reduce(evs).Info.WaveBranch
	for n := 1; n <= 2; n++ {
		path := fmt.Sprintf("src/i%d/done.txt", n)
		if _, err := exec.Command("git", "--git-dir", r.origin, "cat-file", "-e", wave+":"+path).Output(); err != nil {
			t.Errorf("the wave branch %s on origin lacks #%d's %s", wave, n, path)
		}
	}
	prs, _ := filepath.Glob(filepath.Join(r.root, ".wave", "backlog-local", "prs", "*"))
	if len(prs) != 1 {
		t.Fatalf("%d final PR files, want 1: %v", len(prs), prs)
	}
	body, _ := os.ReadFile(prs[0])
	for n := 1; n <= 2; n++ {
		if !strings.Contains(string(body), fmt.Sprintf("#%d", n)) {
			t.Errorf("the final PR does not name #%d:\n%s", n, body)
		}
	}
}
