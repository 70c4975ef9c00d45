package supervisor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/buildtest"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/runtime/runtimetest"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter/tmuxtest"
)

// binPath is the wave-orchestrator binary: worker runs are its runner and
// its local worker, so the supervisor's tests run the real thing.
var binPath string

func TestMain(m *testing.M) {
	// The supervisor starts verify and setup held: through this binary.
	if code, ok := runtime.HoldMain(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(tmuxtest.Run(m, func(dir string) error {
		binPath = filepath.Join(dir, "wave-orchestrator")
		return buildtest.Binary(binPath)
	}))
}

// fixture is a clone of a bare origin with a local backlog.
type fixture struct {
	t      testing.TB
	origin string
	root   string
	lane   string
	config string
	// newSource, when set, makes the issue source of each run (a fresh
	// client of the fake GitHub, as a new process would have); nil is the
	// local markdown source.
	newSource func() forge.Source
	// unconfined: the test's workers or verify step are its actors in
	// the world outside their checkout (see actsOutside).
	unconfined bool
}

// actsOutside marks a test whose shell workers or verify step act, as
// the test's hands, on the world outside their checkout — they move
// origin away, touch the gates the test waits on, delete their own
// worktree, commit in the user's clone — to make something happen at a
// chosen moment: they run unsandboxed, as a sandbox stops exactly that
// (sandbox_test.go proves it does).
func (f *fixture) actsOutside() { f.unconfined = true }

// git runs git in dir under the test identity and returns its stdout.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, args...)
}

const baseConfig = `executors:
  default: local
runtime:
  heartbeatIntervalMs: 200
  terminateGraceMs: 500
backlog:
  source: local
  silenceSeconds: 30
  inputWaitMinutes: 0
  executor:
    id: local
`

// newFixture is a clone of an origin whose main holds a README and a
// .gitignore keeping lane state out of commits.
func newFixture(t testing.TB) *fixture {
	t.Helper()
	origin := gittest.OriginWithBase(t, map[string]string{"README.md": "scratch\n", ".gitignore": ".wave/\n"})
	f := &fixture{t: t, origin: origin, root: gittest.CloneOf(t, origin), lane: "main", config: baseConfig}
	f.killTmuxAtEnd()
	return f
}

// otherClone is a second clone of f's origin (another machine, or another
// checkout): its own lane state, tmux server and worktrees, the same
// origin and the same issue source maker. name is its directory's.
func (f *fixture) otherClone(name string) *fixture {
	f.t.Helper()
	root := gittest.CloneInto(f.t, f.origin, filepath.Join(f.t.TempDir(), name))
	c := &fixture{t: f.t, origin: f.origin, root: root, lane: f.lane, config: f.config,
		newSource: f.newSource, unconfined: f.unconfined}
	c.killTmuxAtEnd()
	return c
}

// killTmuxAtEnd ends the clone's runs and tmux server when the test
// ends, before its temporary directories go (a clean-up registered later
// runs first): agents outlive their session, so the runs are stopped
// (and once more after the server, for one that was still launching).
func (f *fixture) killTmuxAtEnd() {
	f.t.Cleanup(func() {
		state := filepath.Join(f.root, ".wave")
		if err := runtimetest.StopRuns(state, time.Second); err != nil {
			f.t.Error(err)
		}
		tm := tmuxadapter.New(f.layout().Socket())
		_ = tm.KillServer(context.Background())
		if err := runtimetest.StopRuns(state, time.Second); err != nil {
			f.t.Error(err)
		}
	})
}

func (f *fixture) write(rel, body string) {
	f.t.Helper()
	p := filepath.Join(f.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// issue writes a local backlog issue.
func (f *fixture) issue(n int, title, body string, labels ...string) {
	ls := ""
	if len(labels) > 0 {
		ls = "labels: [" + strings.Join(labels, ", ") + "]\n"
	}
	f.write(fmt.Sprintf("docs/backlog/%d-issue.md", n), fmt.Sprintf("---\ntitle: %q\n%s---\n%s\n", title, ls, body))
}

func (f *fixture) layout() lanes.Layout { return lanes.New(f.root, ".wave", "", f.lane) }

// result of one supervised run.
type result struct {
	Result
	out string
	err error
}

// options builds supervisor options over real parts: the config file,
// the local source, gitops on the clone and tmux runs on the lane socket.
func (f *fixture) options(ctx context.Context, out *syncBuffer, issues ...int) Options {
	f.t.Helper()
	f.write("wave.config.yaml", f.config)
	cfg, err := config.Load(f.root, func(string) (string, bool) { return "", false })
	if err != nil {
		f.t.Fatal(err)
	}
	lane, err := cfg.Lane(f.root, f.lane)
	if err != nil {
		f.t.Fatal(err)
	}
	repo, err := gitops.Open(ctx, f.root, gitops.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	var src forge.Source
	if f.newSource != nil {
		src = f.newSource()
	} else {
		src = f.source()
	}
	cfg.Backlog.WorktreeRoot = filepath.Join(filepath.Dir(f.root), "worktrees")
	// Workers are sandboxed where bubblewrap works: they may read the
	// test's own temporary files (the gates local workers wait for).
	cfg.Backlog.Sandbox.ReadOnly = append(cfg.Backlog.Sandbox.ReadOnly, filepath.Dir(f.t.TempDir()))
	if f.unconfined {
		cfg.Backlog.Sandbox.Mode = "off"
	}
	return Options{Config: cfg, Lane: lane, Layout: f.layout(), Source: src, Git: repo,
		Runs: f.openRuns(ctx, lane), Self: binPath, Issues: issues, Out: out,
		Slug: "t", Tick: 200 * time.Millisecond}
}

// openRuns opens the lane's runs (tmux, on the fixture's socket); the
// watcher stops with ctx.
func (f *fixture) openRuns(ctx context.Context, lane *config.Lane) *runs.Runs {
	f.t.Helper()
	r, err := runs.Open(ctx, lane, f.layout(), binPath, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) source() *forge.Local {
	f.t.Helper()
	src, err := forge.NewLocal(forge.LocalOptions{Dir: filepath.Join(f.root, "docs/backlog"),
		StateDir: filepath.Join(f.root, ".wave", "backlog-local"), Base: "main"})
	if err != nil {
		f.t.Fatal(err)
	}
	return src
}

// run supervises issues to the end (or a 2-minute deadline).
func (f *fixture) run(issues ...int) result {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return f.runCtx(ctx, nil, issues...)
}

// runCtx supervises issues until the end or ctx is done (a crash, as far
// as the run's state is concerned); edit, when set, adjusts the options.
func (f *fixture) runCtx(ctx context.Context, edit func(*Options), issues ...int) result {
	f.t.Helper()
	out := &syncBuffer{}
	o := f.options(ctx, out, issues...)
	if edit != nil {
		edit(&o)
	}
	s, err := New(o)
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := s.Run(ctx)
	f.t.Logf("supervisor output:\n%s", out.String())
	if err != nil || res.ExitCode != 0 {
		logs, _ := filepath.Glob(filepath.Join(res.Dir, "runs", "*", "agent.log"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			f.t.Logf("%s:\n%s", l, b)
		}
	}
	return result{Result: res, out: out.String(), err: err}
}

// originFile is path's content on origin's branch; false when absent.
func (f *fixture) originFile(branch, path string) (string, bool) {
	return gittest.File(f.origin, branch, path)
}

func (f *fixture) originBranches() []string {
	out := git(f.t, f.origin, "for-each-ref", "--format=%(refname)", "refs/heads")
	return strings.Fields(out)
}

func (f *fixture) events(dir string) []backlog.Event {
	evs, _, err := readEvents(dir)
	if err != nil {
		f.t.Fatal(err)
	}
	return evs
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func readEvents(dir string) ([]backlog.Event, []string, error) {
	return jsonfile.ReadLines[backlog.Event](filepath.Join(dir, runlog.EventsFile))
}

// liveProcesses is the runner and agent pids of the run in runDir that
// are still alive (none once the run was stopped or ended).
func liveProcesses(runDir string) []int {
	rec, err := runtime.ReadRecord(filepath.Join(runDir, "runtime.json"))
	if err != nil {
		return nil
	}
	var live []int
	if runtime.ProcAlive(rec.RunnerPid, rec.RunnerStartTime) && rec.RunnerStartTime != 0 {
		live = append(live, rec.RunnerPid)
	}
	if runtime.ProcAlive(rec.ExecutorPid, rec.ExecutorStartTime) && rec.ExecutorStartTime != 0 {
		live = append(live, rec.ExecutorPid)
	}
	return live
}
