package e2etest

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

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// WorkerExecutor matches the scaffold's backlog.executor block (id: local).
var WorkerExecutor = regexp.MustCompile(`(?m)^  executor:\n    id: local.*$`)

// UseClaudeWorkers points backlog.executor at the real claude binary,
// talking to model in the given output format, offline: its own config
// directory, no telemetry or update checks, as root only in a sandbox.
func (r *BacklogRepo) UseClaudeWorkers(bin string, model *FakeModel, format string) {
	r.T.Helper()
	r.useClaude(bin, model, format, [2]string{"env.ANTHROPIC_API_KEY", "test"})
}

// UseClaudeSubscriberWorkers is UseClaudeWorkers signed in with a
// subscription's token (CLAUDE_CODE_OAUTH_TOKEN) instead of an API key:
// the CLI then reports a usage limit in a subscriber's words.
func (r *BacklogRepo) UseClaudeSubscriberWorkers(bin string, model *FakeModel, format string) {
	r.T.Helper()
	r.useClaude(bin, model, format, [2]string{"env.CLAUDE_CODE_OAUTH_TOKEN", "test-subscription"})
}

func (r *BacklogRepo) useClaude(bin string, model *FakeModel, format string, auth [2]string) {
	r.T.Helper()
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		r.T.Fatal(err)
	}
	keys := [][2]string{
		{"id", "claude"},
		{"claude.command", bin},
		{"claude.output_format", format},
		// Through the generated --settings file, which the real binary must accept.
		{"claude.settings_json", `{"permissions":{"defaultMode":"bypassPermissions"}}`},
		{"env.ANTHROPIC_BASE_URL", model.URL},
		auth,
		{"env.IS_SANDBOX", "1"},
		{"env.CLAUDE_CONFIG_DIR", filepath.Join(filepath.Dir(r.Root), "claude-config")},
		{"env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
		{"env.DISABLE_AUTOUPDATER", "1"},
	}
	var b strings.Builder
	b.WriteString("  executor:")
	for _, kv := range keys {
		v, _ := json.Marshal(kv[1]) // a JSON string is a YAML string
		fmt.Fprintf(&b, "\n    %s: %s", kv[0], v)
	}
	if !WorkerExecutor.Match(cfg) {
		r.T.Fatalf("wave.config.yaml has no scaffolded backlog.executor block:\n%s", cfg)
	}
	r.Write("wave.config.yaml", WorkerExecutor.ReplaceAllLiteralString(string(cfg), b.String()))
}

// RunEvents reads the backlog events of the run in runDir.
func RunEvents(t *testing.T, runDir string) []backlog.Event {
	t.Helper()
	evs, _, err := jsonfile.ReadLines[backlog.Event](filepath.Join(runDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// MergedWithFinalPR: the run finished with issues 1..n merged, each one's
// file on the wave branch at origin, and one final PR file naming them.
func (r *BacklogRepo) MergedWithFinalPR(runDir string, n int) {
	t := r.T
	t.Helper()
	st := r.RunEnv(context.Background(), "backlog", "status", "--json")
	var v struct {
		State   string         `json:"state"`
		Tally   backlog.Tally  `json:"tally"`
		FinalPR *backlog.PRRef `json:"finalPr"`
	}
	if err := json.Unmarshal([]byte(st.Stdout), &v); err != nil {
		t.Fatalf("status json: %v\n%s", err, st.Stdout)
	}
	if v.State != "finished" || v.Tally.Merged != n || v.FinalPR == nil {
		t.Fatalf("status: %+v, want finished with %d merged and a final PR", v, n)
	}
	wave := backlog.Reduce(RunEvents(t, runDir)).Info.WaveBranch
	prs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "backlog-local", "prs", "*"))
	if len(prs) != 1 {
		t.Fatalf("%d final PR files, want 1: %v", len(prs), prs)
	}
	body, _ := os.ReadFile(prs[0])
	for i := 1; i <= n; i++ {
		path := fmt.Sprintf("src/i%d/done.txt", i)
		if !gittest.HasPath(r.Origin, wave, path) {
			t.Errorf("the wave branch %s on origin lacks #%d's %s", wave, i, path)
		}
		if !strings.Contains(string(body), fmt.Sprintf("Closes #%d", i)) {
			t.Errorf("the final PR does not close #%d:\n%s", i, body)
		}
	}
}

// ClaudeBin is the real claude CLI named by $CLAUDETEST_BIN (not WAVE_*:
// the binary warns about WAVE_* variables it does not know). Without it
// the test skips, unless $CLAUDETEST_REQUIRED asks for it to fail.
func ClaudeBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("CLAUDETEST_BIN")
	if bin == "" {
		msg := "set CLAUDETEST_BIN to a claude CLI to run this test, e.g. " +
			"npm install --prefix /tmp/claude-cli @anthropic-ai/claude-code && " +
			"CLAUDETEST_BIN=/tmp/claude-cli/node_modules/.bin/claude go test ./e2e/backlogcli ./e2e/agentdrive -run Claude"
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
