package realrepo

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// module is the real module the backlog works on: public, small, with
// tests of its own, already in this project's go.sum (so in the module
// cache of anyone who built it) and written by other people.
const module = "github.com/google/uuid"

// goEnv is what every go command of the test and of the run (its
// setup, workers and verify) runs with: offline, from the module cache
// and build cache this machine has.
type goEnv struct{ modCache, buildCache string }

func (g goEnv) vars() []string {
	return []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local",
		"GOMODCACHE=" + g.modCache, "GOCACHE=" + g.buildCache}
}

// cachedModule is module's source as the module cache holds it, and the
// caches: skipped (failed with REALREPO_REQUIRED) when go or the module
// is not there, since the test never downloads.
func cachedModule(t *testing.T) (string, goEnv) {
	t.Helper()
	need := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("REALREPO_REQUIRED") != "" {
			t.Fatalf(format, args...)
		}
		t.Skipf(format, args...)
	}
	if _, err := exec.LookPath("go"); err != nil {
		need("no go toolchain on PATH: %v", err)
	}
	var g goEnv
	for k, p := range map[string]*string{"GOMODCACHE": &g.modCache, "GOCACHE": &g.buildCache} {
		out, err := exec.Command("go", "env", k).Output()
		if err != nil || strings.TrimSpace(string(out)) == "" {
			need("go env %s: %v", k, err)
		}
		*p = strings.TrimSpace(string(out))
	}
	// The version this project's build list has; GOPROXY=off: the cache
	// has it or this fails.
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Env = append(os.Environ(), g.vars()...)
	out, _ := cmd.Output()
	var m struct{ Dir, Version, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Error != "" || m.Dir == "" {
		need("%s is not in the module cache (go mod download -json: %v %s)", module, err, m.Error)
	}
	t.Logf("%s %s from %s", module, m.Version, m.Dir)
	return m.Dir, g
}

// copyTree copies the module's files (read-only in the cache) into dir,
// writable.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// workerScript is every worker: a scripted change to the module's code
// and a test of it, per issue. #3's first change has a bug its own test
// catches; sent back (verify failed), it fixes it.
const workerScript = `set -e
commit() { git add -A && git -c user.name=worker -c user.email=worker@example.com commit -qm "$1"; }
case "$WAVE_ISSUE_NUMBER" in
1)
  cat >> uuid.go <<'EOF'

// IsZero reports whether uuid is the Nil UUID.
func (uuid UUID) IsZero() bool { return uuid == Nil }
EOF
  cat > iszero_test.go <<'EOF'
package uuid

import "testing"

func TestIsZero(t *testing.T) {
	if !Nil.IsZero() {
		t.Error("Nil is not zero")
	}
	if Must(NewRandom()).IsZero() {
		t.Error("a random UUID is zero")
	}
}
EOF
  commit "Add UUID.IsZero" ;;
2)
  cat >> marshal.go <<'EOF'

// AppendText appends the textual form of uuid to b (encoding.TextAppender).
func (uuid UUID) AppendText(b []byte) ([]byte, error) {
	return append(b, uuid.String()...), nil
}
EOF
  cat > appendtext_test.go <<'EOF'
package uuid

import "testing"

func TestAppendText(t *testing.T) {
	u := MustParse("f47ac10b-58cc-0372-8567-0e02b2c3d479")
	b, err := u.AppendText([]byte("id="))
	if err != nil || string(b) != "id=f47ac10b-58cc-0372-8567-0e02b2c3d479" {
		t.Errorf("AppendText: %q, %v", b, err)
	}
}
EOF
  commit "Add UUID.AppendText" ;;
3)
  if grep -q 'func NewNullUUID' null.go; then
    sed -i 's/Valid: false}/Valid: true}/' null.go
    commit "NewNullUUID: a NullUUID of a UUID is valid"
  else
    cat >> null.go <<'EOF'

// NewNullUUID is u as a valid NullUUID.
func NewNullUUID(u UUID) NullUUID { return NullUUID{UUID: u, Valid: false} }
EOF
    cat > nullnew_test.go <<'EOF'
package uuid

import "testing"

func TestNewNullUUID(t *testing.T) {
	u := Must(NewRandom())
	if n := NewNullUUID(u); !n.Valid || n.UUID != u {
		t.Errorf("NewNullUUID(%v) = %+v", u, n)
	}
}
EOF
    commit "Add NewNullUUID"
  fi ;;
esac
echo "[backlog-result] state=done detail=changed the module for #$WAVE_ISSUE_NUMBER"
`

// A backlog of three issues on github.com/google/uuid, worked by
// scripted workers editing its code, backlog.setup `go mod download`
// and backlog.verify `go test ./...` — sandboxed where bubblewrap works,
// with the module and build caches read-only, offline: every issue
// merges (#3 after its own test caught its bug and sent it back), the
// final PR lists them, and each merge commit on the wave branch passes
// the module's tests.
func TestARealGoModuleBacklogMergesEveryIssueAndEachMergePassesItsTests(t *testing.T) {
	src, g := cachedModule(t)
	r := e2etest.NewBacklogRepo(t)
	copyTree(t, src, r.Root)
	e2etest.GitIn(t, r.Root, "add", "-A")
	e2etest.GitIn(t, r.Root, "commit", "-qm", "github.com/google/uuid, as its module is published")
	e2etest.GitIn(t, r.Root, "push", "-q", "origin", "HEAD:main")

	script := filepath.Join(t.TempDir(), "worker.sh")
	if err := os.WriteFile(script, []byte(workerScript), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", e2etest.WorkerExecutor.ReplaceAllLiteralString(string(cfg),
		fmt.Sprintf("  executor:\n    id: shell\n    shell.command: %q", "sh "+script)))
	r.SetBacklogKey(t, "setup: [go, mod, download]")
	r.SetBacklogKey(t, "verify: [go, test, ./...]")
	r.SetBacklogKey(t, fmt.Sprintf("sandbox: {readOnly: [%q, %q]}", g.modCache, g.buildCache))
	r.Issue(1, "Tell a zero UUID", "Files: uuid.go, iszero_test.go")
	r.Issue(2, "UUID as an encoding.TextAppender", "Files: marshal.go, appendtext_test.go")
	r.Issue(3, "NullUUID from a UUID", "Files: null.go, nullnew_test.go")
	r.CommitIssues(t)

	// The harness's read-only view of the test's files is left out: the
	// config's backlog.sandbox.readOnly is what the README says to write.
	var env []string
	for _, kv := range r.Env() {
		if !strings.HasPrefix(kv, "WAVE_BACKLOG_SANDBOX_READ_ONLY=") {
			env = append(env, kv)
		}
	}
	env = append(env, g.vars()...)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	res := r.RunWith(ctx, env, "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	dir, evs := r.RunLog()
	if res.Code != 0 {
		for _, l := range logs(dir) {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
		t.Fatalf("backlog run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	run := backlog.Reduce(evs)
	if _, err := sandbox.Usable(ctx); err == nil && (run.Sandbox == nil || !run.Sandbox.On) {
		t.Errorf("bubblewrap works here, yet the run was not sandboxed: %+v", run.Sandbox)
	}
	for n := 1; n <= 3; n++ {
		is := run.Issues[n]
		if is == nil || is.State != backlog.StateMerged || is.Setup == nil || is.Setup.Outcome != backlog.SetupPassed {
			t.Fatalf("#%d: %+v; want merged after its checkout's setup passed", n, is)
		}
	}
	if is := run.Issues[3]; is.Reworks != 1 || is.ReworkFrom != backlog.ReworkVerify || !strings.Contains(is.Feedback, "TestNewNullUUID") {
		t.Errorf("#3: %d rework rounds from %q, feedback %q; want one round from the module's failing test", is.Reworks, is.ReworkFrom, is.Feedback)
	}
	for n := 1; n <= 3; n++ {
		b, _ := os.ReadFile(filepath.Join(dir, "verify", fmt.Sprintf("i%d.log", n)))
		if !strings.Contains(string(b), "ok  \t"+module) {
			t.Errorf("#%d's verify log does not show the module's tests passing:\n%s", n, b)
		}
	}
	body := r.FinalPRBody(t)
	for n := 1; n <= 3; n++ {
		if !strings.Contains(body, fmt.Sprintf("- #%d ", n)) || !strings.Contains(body, fmt.Sprintf("Closes #%d", n)) {
			t.Errorf("the final PR does not list #%d:\n%s", n, body)
		}
	}

	// Each merge commit, checked out on its own, passes the module's
	// tests (here, outside any sandbox, with this test's caches).
	check := filepath.Join(t.TempDir(), "check")
	e2etest.GitIn(t, filepath.Dir(check), "clone", "-q", r.Origin, check)
	merges := 0
	for _, ev := range evs {
		if ev.Kind != backlog.EvMerged {
			continue
		}
		merges++
		e2etest.GitIn(t, check, "checkout", "-q", "--detach", ev.Commit)
		cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "./...")
		cmd.Dir, cmd.Env = check, append(os.Environ(), g.vars()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("merge of #%d (%s) fails the module's tests: %v\n%s", ev.Issue, ev.Commit, err, out)
		}
	}
	if merges != 3 {
		t.Errorf("%d merges recorded, want 3", merges)
	}
	e2etest.GitIn(t, check, "checkout", "-q", "--detach", "origin/"+run.Info.WaveBranch)
	for file, want := range map[string]string{"uuid.go": "func (uuid UUID) IsZero", "marshal.go": "func (uuid UUID) AppendText",
		"null.go": "NullUUID{UUID: u, Valid: true}"} {
		if b, _ := os.ReadFile(filepath.Join(check, file)); !strings.Contains(string(b), want) {
			t.Errorf("the wave branch's %s lacks %q", file, want)
		}
	}
}

// logs are the run's agent, setup and verify logs.
func logs(dir string) []string {
	var out []string
	for _, pat := range []string{"runs/*/agent.log", "setup/*.log", "verify/*.log"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		out = append(out, m...)
	}
	return out
}
