package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// needBwrap skips where bubblewrap cannot make a sandbox, unless
// SANDBOXTEST_REQUIRED asks for a failure instead.
func needBwrap(t *testing.T) {
	t.Helper()
	if _, err := sandbox.Usable(context.Background()); err != nil {
		if os.Getenv("SANDBOXTEST_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// counting is a server on 127.0.0.1 that counts the requests it gets.
func counting(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, "reached")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// userHome is a user's home directory with an SSH key, a GitHub CLI
// token, another project and a git identity.
func userHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for p, c := range map[string]string{
		".ssh/id_ed25519":        sshKey,
		".config/gh/hosts.yml":   "github.com:\n  oauth_token: gho_NOTFORWORKERS\n",
		"other-project/notes.md": "private notes",
		".gitconfig":             "[user]\n\tname = Worker Owner\n\temail = owner@example.com\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(home, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

const sshKey = "-----BEGIN OPENSSH PRIVATE KEY----- the user's key"

// shellWorkers makes every worker run script (bash) with ROOT (the
// repository) and OTHER (a port on 127.0.0.1 no allowlist names) set.
func shellWorkers(t *testing.T, r *e2etest.BacklogRepo, script string, other string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "worker.sh")
	pre := fmt.Sprintf("#!/bin/bash\nexport ROOT=%s OTHER=%s\nn=$WAVE_ISSUE_NUMBER\n", e2etest.ShellQuote(r.Root), other)
	if err := os.WriteFile(path, []byte(pre+script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !e2etest.WorkerExecutor.Match(cfg) {
		t.Fatalf("no scaffolded backlog.executor block:\n%s", cfg)
	}
	block := fmt.Sprintf("  executor:\n    id: shell\n    shell.command: %q", "bash "+path)
	r.Write("wave.config.yaml", e2etest.WorkerExecutor.ReplaceAllLiteralString(string(cfg), block))
}

// work is what every worker does in the end: commit its issue's file and
// say it is done.
const work = `mkdir -p src/i$n && echo "work of #$n" > src/i$n/done.txt && git add -A && git commit -qm "Work on #$n"
echo "[backlog-result] state=done detail=worked on #$n"
`

// attacks is what a hostile worker (#1) tries first. Reads, connections
// and kills are judged inside, each reported "attack NAME: failed" or
// "SUCCEEDED"; writes to the run's records and state may land in the
// sandbox's private scratch of those paths, so the test judges them
// where they matter, outside.
const attacks = `try() { local what=$1; shift; if ( "$@" ) >/dev/null 2>&1; then echo "attack $what: SUCCEEDED"; else echo "attack $what: failed"; fi; }
if [ "$n" = 1 ]; then
  try read-ssh-key cat "$HOME/.ssh/id_ed25519"
  try read-gh-token cat "$HOME/.config/gh/hosts.yml"
  try read-other-project cat "$HOME/other-project/notes.md"
  try kill-supervisor bash -c 'pid=$(sed -n "s/.*\"pid\": *\([0-9]*\).*/\1/p" "$ROOT/.wave/lanes/main/lock"); [ -n "$pid" ] && kill -9 "$pid"'
  try connect-direct bash -c 'exec 3<>/dev/tcp/127.0.0.1/$OTHER'
  try connect-through-proxy bash -c 'p=${HTTPS_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/${p%/}; printf "CONNECT 127.0.0.1:%s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\n\r\n" $OTHER $OTHER >&3; read -r l <&3; case "$l" in *" 200 "*) exit 0;; esac; exit 1'
  ( echo '{"kind":"merged","issue":9}' >> "$WAVE_RUN_DIR/../../events.jsonl"
    echo '{}' > "$WAVE_RUN_DIR/runtime.json"
    mkdir -p "$ROOT/.wave/planted" && touch "$ROOT/.wave/planted/x" ) 2>/dev/null
  echo "attack writes: tried"
fi
`

// runWith runs `backlog run` over issues in r as the user whose home is
// home, without the harness's read-only view of the test's files.
func runWith(t *testing.T, r *e2etest.BacklogRepo, home string, extra []string, issues string) e2etest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	env := append(r.Env(), "HOME="+home, "WAVE_BACKLOG_SANDBOX_READ_ONLY=")
	return r.RunWith(ctx, append(env, extra...), "backlog", "run", "--issues", issues, "--no-dashboard")
}

func status(t *testing.T, r *e2etest.BacklogRepo, home string) (string, backlog.StatusView) {
	t.Helper()
	env := append(r.Env(), "HOME="+home)
	text := r.RunWith(context.Background(), env, "backlog", "status")
	js := r.RunWith(context.Background(), env, "backlog", "status", "--json")
	var v backlog.StatusView
	if err := json.Unmarshal([]byte(js.Stdout), &v); err != nil {
		t.Fatalf("backlog status --json: %v\n%s", err, js.Stdout)
	}
	return text.Stdout, v
}

func agentLog(t *testing.T, r *e2etest.BacklogRepo, issue int) string {
	t.Helper()
	return agentLogGlob(t, r, fmt.Sprintf("i%d-a*", issue))
}

// agentLogGlob is the logs of the runs whose directory matches run.
func agentLogGlob(t *testing.T, r *e2etest.BacklogRepo, run string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", run, "agent.log"))
	var b strings.Builder
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		b.Write(data)
	}
	return b.String()
}

// A worker trying, as the issue's text told it, everything an agent with
// a shell can do against the user and the run fails at every attack, and
// the run goes on to merge everyone — the attacker's own change too,
// through the gate like any other.
func TestAWorkerTryingEachAttackFailsWhileTheRunMergesEveryoneElse(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	other, hits := counting(t)
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	port := other.URL[strings.LastIndex(other.URL, ":")+1:]
	shellWorkers(t, r, attacks+work, port)
	for n := 1; n <= 3; n++ {
		r.Issue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: src/i%d/**", n))
	}
	res := runWith(t, r, home, nil, "1,2,3")
	log := agentLog(t, r, 1)
	if res.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s\n#1's log:\n%s", res.Code, res.Stdout, res.Stderr, log)
	}
	for _, a := range []string{"read-ssh-key", "read-gh-token", "read-other-project", "kill-supervisor", "connect-direct", "connect-through-proxy"} {
		if !strings.Contains(log, "attack "+a+": failed") {
			t.Errorf("attack %s did not fail:\n%s", a, log)
		}
	}
	if strings.Contains(log, "SUCCEEDED") || strings.Contains(log, sshKey) || strings.Contains(log, "gho_NOTFORWORKERS") {
		t.Errorf("an attack got through:\n%s", log)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server no allowlist names got %d requests", n)
	}
	if !strings.Contains(log, "attack writes: tried") {
		t.Errorf("the worker did not get to its writes:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(r.Root, ".wave", "planted")); err == nil {
		t.Error("the worker planted a file in .wave")
	}
	recs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "runs", "i1-a1", "runtime.json"))
	for _, p := range recs {
		var rec struct {
			TerminalDisposition string `json:"terminalDisposition"`
			Sandbox             string `json:"sandbox"`
		}
		e2etest.ReadJSONFile(t, p, &rec)
		if rec.TerminalDisposition != "completed" || rec.Sandbox != "bubblewrap" {
			t.Errorf("%s: %+v, want the runner's record of a completed, sandboxed run", p, rec)
		}
	}
	text, v := status(t, r, home)
	if v.Tally.Merged != 3 || v.Sandbox == nil || !v.Sandbox.On {
		t.Fatalf("status: %+v, sandbox %+v; want 3 merged, sandboxed", v.Tally, v.Sandbox)
	}
	for _, ev := range r.RunEvents() {
		if ev.Issue == 9 {
			t.Errorf("a forged event about #9 is in the run's log: %+v", ev)
		}
	}
	blocked := "127.0.0.1:" + port
	if len(v.BlockedHosts) != 1 || v.BlockedHosts[0].Host != blocked || fmt.Sprint(v.BlockedHosts[0].Issues) != "[1]" {
		t.Errorf("status --json blockedHosts = %+v, want %s tried by #1", v.BlockedHosts, blocked)
	}
	if !strings.Contains(text, "blocked host: "+blocked+" (#1)") {
		t.Errorf("backlog status does not show the blocked host:\n%s", text)
	}
	if body := r.FinalPRBody(t); !strings.Contains(body, "## Blocked hosts") || !strings.Contains(body, blocked) {
		t.Errorf("the final PR does not list the blocked host:\n%s", body)
	}
}

// A worker cannot write the run's records: its events, its own runtime
// record, the lane's lock. What the supervisor reads back is what it
// and the runner wrote.
func TestASandboxedWorkerCannotWriteTheRunRecords(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	shellWorkers(t, r, `run=$(dirname "$(dirname "$WAVE_RUN_DIR")")
for f in "$run/events.jsonl" "$WAVE_RUN_DIR/runtime.json" "$WAVE_RUN_DIR/status.json" "$ROOT/.wave/lanes/main/lock" "$ROOT/.wave/lanes/main/events.jsonl"; do
  if echo '{"kind":"merged","issue":7,"terminalDisposition":"completed"}' >> "$f" 2>/dev/null; then echo "wrote $f"; fi
done
`+work, "0")
	r.Issue(1, "One", "Files: src/i1/**")
	res := runWith(t, r, home, nil, "1")
	if res.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, ev := range r.RunEvents() {
		if ev.Issue == 7 {
			t.Errorf("a line the worker wrote is in the run's events: %+v", ev)
		}
	}
	for _, pattern := range []string{"lanes/main/backlog/*/runs/i1-a1/runtime.json", "lanes/main/backlog/*/runs/i1-a1/status.json", "lanes/main/lock", "lanes/main/events.jsonl"} {
		files, _ := filepath.Glob(filepath.Join(r.Root, ".wave", pattern))
		for _, f := range files {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), `"issue":7`) {
				t.Errorf("%s holds the worker's line:\n%s", f, b)
			}
		}
	}
	_, v := status(t, r, home)
	if v.Tally.Merged != 1 {
		t.Errorf("tally %+v, want #1 merged", v.Tally)
	}
}

// The sandbox lets a worker reach its allowlist (backlog.sandbox
// .allowHosts, and its executor's model endpoint) and nothing else: a
// second server on 127.0.0.1 receives nothing, and the host it tried is
// in backlog status and the final PR.
func TestASandboxedWorkerReachesOnlyAllowedHosts(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	allowed, allowedHits := counting(t)
	other, otherHits := counting(t)
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	r.SetBacklogKey(t, fmt.Sprintf("sandbox:\n    allowHosts: [%q]", allowed.URL))
	otherPort := other.URL[strings.LastIndex(other.URL, ":")+1:]
	// Through the proxy the shim gives it ($HTTP_PROXY), and directly.
	shellWorkers(t, r, fmt.Sprintf(`get() { local hp=$1 port=${HTTP_PROXY##*:}; exec 3<>/dev/tcp/127.0.0.1/${port%%/} || return 1
  printf "GET http://%%s/ HTTP/1.1\r\nHost: %%s\r\nConnection: close\r\n\r\n" $hp $hp >&3; cat <&3; exec 3<&-; }
get %s | grep -q reached && echo "allowed: reached"
get 127.0.0.1:$OTHER | head -n1
(exec 3<>/dev/tcp/127.0.0.1/$OTHER) 2>/dev/null && echo "other: reached directly"
`, strings.TrimPrefix(allowed.URL, "http://"))+work, otherPort)
	r.Issue(1, "One", "Files: src/i1/**")
	res := runWith(t, r, home, nil, "1")
	log := agentLog(t, r, 1)
	if res.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s\n%s", res.Code, res.Stdout, res.Stderr, log)
	}
	if !strings.Contains(log, "allowed: reached") || !strings.Contains(log, "403 Forbidden") || strings.Contains(log, "reached directly") {
		t.Errorf("want the allowed host reached, the other refused (403) and unreachable directly:\n%s", log)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the server no allowlist names got %d requests", n)
	}
	if n := allowedHits.Load(); n != 1 {
		t.Errorf("the allowed server got %d requests, want 1", n)
	}
	text, v := status(t, r, home)
	blocked := "127.0.0.1:" + otherPort
	if len(v.Issues) != 1 || fmt.Sprint(v.Issues[0].BlockedHosts) != "["+blocked+"]" || !strings.Contains(text, "blocked host: "+blocked+" (#1)") {
		t.Errorf("status does not name the blocked host %s for #1:\n%s\n%+v", blocked, text, v.Issues)
	}
	if body := r.FinalPRBody(t); !strings.Contains(body, "- `"+blocked+"` — #1") {
		t.Errorf("the final PR does not list the blocked host:\n%s", body)
	}
}

// backlog.verify runs the worker's code: it never sees a secret of the
// supervisor's environment — the GitHub token variables, the notify
// sink's URL, the model key — while the rest of the environment is
// there, and it runs sandboxed (the run's state out of its sight).
func TestVerifyNeverSeesTheTokens(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	shellWorkers(t, r, work, "0")
	hook := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(hook.Close)
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", string(cfg)+"notify:\n  - kind: webhook\n    urlEnv: TEAM_HOOK_URL\n")
	r.SetBacklogKey(t, `verify: [bash, -c, 'env; ls "$ROOT_TO_HIDE/.wave" && echo "sees the run state"; exit 0']`)
	r.Issue(1, "One", "Files: src/i1/**")
	secrets := map[string]string{"GITHUB_TOKEN": "ghp_verifymustnotsee1", "GH_TOKEN": "gho_verifymustnotsee2",
		"ANTHROPIC_API_KEY": "sk-ant-verifymustnotsee3", "TEAM_HOOK_URL": hook.URL + "/hooks/verifymustnotsee4"}
	extra := []string{"WAVE_TEST_PLAIN=plain-value-verify-sees", "ROOT_TO_HIDE=" + r.Root}
	for k, v := range secrets {
		extra = append(extra, k+"="+v)
	}
	res := runWith(t, r, home, extra, "1")
	if res.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	logs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "verify", "i1.log"))
	if len(logs) != 1 {
		t.Fatalf("verify logs %v, want one", logs)
	}
	b, _ := os.ReadFile(logs[0])
	out := string(b)
	if !strings.Contains(out, "WAVE_TEST_PLAIN=plain-value-verify-sees") || !strings.Contains(out, "WAVE_ISSUE_NUMBER=1") {
		t.Fatalf("verify's environment lacks what it should see:\n%s", out)
	}
	for k, v := range secrets {
		if strings.Contains(out, v) || strings.Contains(out, k+"=") {
			t.Errorf("verify saw %s:\n%s", k, out)
		}
	}
	if strings.Contains(out, "sees the run state") {
		t.Errorf("verify saw the run's state:\n%s", out)
	}
}

// With backlog.sandbox.mode off, workers run unconfined and the run
// says so where a person looks: backlog status, the final PR, doctor.
func TestAnUnsandboxedRunSaysSo(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.SetBacklogKey(t, "sandbox:\n    mode: \"off\"")
	r.Issue(1, "One", "Files: src/i1/**")
	home := userHome(t)
	res := runWith(t, r, home, nil, "1")
	if res.Code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "warning: workers are not sandboxed (backlog.sandbox.mode: off)") {
		t.Errorf("backlog run did not warn:\n%s", res.Stdout)
	}
	text, v := status(t, r, home)
	if v.Sandbox == nil || v.Sandbox.On || !strings.Contains(text, "sandbox: off (backlog.sandbox.mode: off)") {
		t.Errorf("status does not say the workers were not sandboxed:\n%s\n%+v", text, v.Sandbox)
	}
	if body := r.FinalPRBody(t); !strings.Contains(body, "## Sandbox") || !strings.Contains(body, "ran without a sandbox") {
		t.Errorf("the final PR does not say so:\n%s", body)
	}
	doc := r.RunWith(context.Background(), append(r.Env(), "HOME="+home), "doctor")
	if !strings.Contains(doc.Stdout, "sandbox: off (backlog.sandbox.mode: off)") {
		t.Errorf("doctor does not say so:\n%s", doc.Stdout)
	}
}

// Wave agents run sandboxed when runtime.sandbox.mode asks for it: the
// repository is their checkout (they post their coordination records
// under its .wave), their home is private, and the wave passes.
func TestWaveAgentsRunSandboxedWhenAsked(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	home := userHome(t)
	res := r.RunWith(e2etest.Context(t), []string{"WAVE_RUNTIME_SANDBOX_MODE=on", "HOME=" + home}, "launch", "--lane", "main", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("launch: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	recs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "waves", "0", "runs", "*", "runtime.json"))
	if len(recs) < 5 {
		t.Fatalf("%d run records, want every agent's: %v", len(recs), recs)
	}
	for _, p := range recs {
		var rec struct {
			Sandbox string `json:"sandbox"`
		}
		e2etest.ReadJSONFile(t, p, &rec)
		if rec.Sandbox != "bubblewrap" {
			t.Errorf("%s: sandbox %q, want bubblewrap", p, rec.Sandbox)
		}
	}
}
