package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// BacklogRepo is a scaffolded clone of a bare origin with a local backlog.
type BacklogRepo struct {
	*Repo
	Origin string
}

// GitIn runs git in dir as a test identity; a failure fails the test.
func GitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, args...)
}

// NewBacklogRepo makes a clone of a fresh bare origin, `init`ed in the
// clone and pushed as origin's main: a project set up for backlog runs.
func NewBacklogRepo(t *testing.T) *BacklogRepo {
	t.Helper()
	origin := gittest.EmptyOrigin(t)
	r := &BacklogRepo{Repo: &Repo{T: t, Root: gittest.CloneOf(t, origin)}, Origin: origin}
	t.Cleanup(r.CleanupTmux)
	if res := r.Run(context.Background(), "init"); res.Code != 0 {
		t.Fatalf("init: %d %s", res.Code, res.Stderr)
	}
	gittest.PushBase(t, r.Root, "scaffold")
	return r
}

// Issue writes local issue n.
func (r *BacklogRepo) Issue(n int, title, body string) {
	r.Write(fmt.Sprintf("docs/backlog/%d-issue.md", n), fmt.Sprintf("---\ntitle: %q\n---\n%s\n", title, body))
}

// Env is the environment backlog commands run with: a private state
// home, short heartbeats, no wait for answers.
func (r *BacklogRepo) Env() []string {
	return []string{"XDG_STATE_HOME=" + filepath.Join(filepath.Dir(r.Root), "state"),
		"WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS=200", "WAVE_RUNTIME_TERMINATE_GRACE_MS=500",
		// A run with only questions left ends at once (exit 43) unless a
		// test says otherwise (a later entry wins).
		"WAVE_BACKLOG_INPUT_WAIT_MINUTES=0",
		// Workers are sandboxed where bubblewrap works: they may read the
		// test's own temporary files (the gates local workers wait for).
		"WAVE_BACKLOG_SANDBOX_READ_ONLY=" + TestTempRoot(r.T)}
}

// TestTempRoot is the directory holding every t.TempDir() of t.
func TestTempRoot(t *testing.T) string { return filepath.Dir(t.TempDir()) }

// RunEnv runs the binary with args and Env.
func (r *BacklogRepo) RunEnv(ctx context.Context, args ...string) Result {
	r.T.Helper()
	return r.RunWith(ctx, r.Env(), args...)
}

// Kill9Trials is n, 1 with -short, or $WAVE_KILL9_TRIALS for a soak run.
func Kill9Trials(n int) int {
	if v, err := strconv.Atoi(os.Getenv("WAVE_KILL9_TRIALS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 1
	}
	return n
}

// BacklogRuns lists the lane's backlog run directories.
func (r *BacklogRepo) BacklogRuns() []string {
	dirs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*"))
	return dirs
}

// UseGitHub points the repository's backlog at a fake GitHub and returns
// the environment the binary needs for it.
func (r *BacklogRepo) UseGitHub(gh *forgetest.Server) []string {
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		r.T.Fatal(err)
	}
	r.Write("wave.config.yaml", string(cfg)+fmt.Sprintf("github:\n  owner: acme\n  repo: widgets\n  apiUrl: %s\n", gh.URL))
	return append(r.Env(), "GITHUB_TOKEN="+forgetest.Token)
}

// PauseAHangingRun starts a run of one issue whose worker hangs, waits
// for the worker, asks `backlog stop`, and returns the supervisor's output
// and how it exited.
func (r *BacklogRepo) PauseAHangingRun(t *testing.T) (string, error) {
	t.Helper()
	r.Issue(1, "Works for a long time", "Files: a/**\n\nlocal-agent: hang")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l := &Lives{R: r, Args: []string{"backlog", "run", "--issues", "1", "--no-dashboard"}}
	t.Cleanup(func() { l.Dump(t) })
	run := l.Start(ctx, "")
	WaitFor(t, "the worker to start", time.Minute, func() bool {
		v, err := r.TryStatus()
		return err == nil && v.Tally.InFlight == 1
	})
	if res := r.RunEnv(ctx, "backlog", "stop"); res.Code != 0 {
		t.Fatalf("stop: %d %s", res.Code, res.Stderr)
	}
	err := run.Wait()
	return l.Outs[0].String(), err
}

// SurfaceStatus is the part of `backlog status --json` about surfaces.
type SurfaceStatus struct {
	Run struct {
		WaveBranch string `json:"waveBranch"`
	} `json:"run"`
	Issues []struct {
		Number  int      `json:"number"`
		State   string   `json:"state"`
		Outside []string `json:"outside"`
		Detail  string   `json:"detail"`
		RunDir  string   `json:"runDir"`
	} `json:"issues"`
}

// SurfaceStatus runs `backlog status --json` for its surface facts.
func (r *BacklogRepo) SurfaceStatus(t *testing.T) SurfaceStatus {
	t.Helper()
	res := r.RunEnv(context.Background(), "backlog", "status", "--json")
	var v SurfaceStatus
	if err := json.Unmarshal([]byte(res.Stdout), &v); err != nil {
		t.Fatalf("status --json: %v\n%s", err, res.Stdout)
	}
	return v
}

// FinalPRBody is the body of the run's final PR.
func (r *BacklogRepo) FinalPRBody(t *testing.T) string {
	t.Helper()
	prs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "backlog-local", "prs", "*.md"))
	if len(prs) != 1 {
		t.Fatalf("%d final PR files, want 1: %v", len(prs), prs)
	}
	b, err := os.ReadFile(prs[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// SetBacklogKey adds line to the config's backlog section.
func (r *BacklogRepo) SetBacklogKey(t *testing.T, line string) {
	t.Helper()
	p := filepath.Join(r.Root, "wave.config.yaml")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	key, _, _ := strings.Cut(line, ":")
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "  "+key+":") { // the scaffold's own value of the key
			kept = append(kept, l)
		}
	}
	cfg := strings.Replace(strings.Join(kept, "\n"), "backlog:\n", "backlog:\n  "+line+"\n", 1)
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CommitIssues commits and pushes the local issues.
func (r *BacklogRepo) CommitIssues(t *testing.T) {
	t.Helper()
	GitIn(t, r.Root, "add", "-A")
	GitIn(t, r.Root, "commit", "-q", "-m", "issues")
	GitIn(t, r.Root, "push", "-q", "origin", "main")
}

// CountEvents counts the run's events matching match.
func (r *BacklogRepo) CountEvents(match func(backlog.Event) bool) int {
	_, evs := r.RunLog()
	n := 0
	for _, ev := range evs {
		if match(ev) {
			n++
		}
	}
	return n
}

// StartEnv runs the binary in the background with the backlog repo's
// environment (state home, short heartbeats) and extra entries.
func (r *BacklogRepo) StartEnv(ctx context.Context, extra []string, args ...string) *Background {
	r.T.Helper()
	cmd := r.Command(ctx, args...)
	cmd.Env = append(append(cmd.Env, r.Env()...), extra...)
	return startCmd(r.T, cmd)
}

// OriginRefs lists the refs of origin under prefix.
func (r *BacklogRepo) OriginRefs(t *testing.T, prefix string) string {
	t.Helper()
	return GitIn(t, r.Origin, "for-each-ref", "--format=%(refname)", prefix)
}

// NothingClaimed fails the test if the run claimed, cut or recorded
// anything: no claim ref and no wave branch on origin, no run dir.
func (r *BacklogRepo) NothingClaimed(t *testing.T) {
	t.Helper()
	if refs := r.OriginRefs(t, "refs/heads/wave-claims/"); refs != "" {
		t.Errorf("claim refs on origin although preflight failed:\n%s", refs)
	}
	if refs := r.OriginRefs(t, "refs/heads/wave/"); refs != "" {
		t.Errorf("a wave branch was pushed although preflight failed:\n%s", refs)
	}
	if runs, _ := filepath.Glob(filepath.Join(r.Layout().StateDir, "backlog", "*")); len(runs) > 0 {
		t.Errorf("backlog run dirs were created: %v", runs)
	}
}

// IssueLive is one issue of `backlog status --json` with its live worker facts.
type IssueLive struct {
	Number        int    `json:"number"`
	State         string `json:"state"`
	Session       string `json:"session"`
	RunDir        string `json:"runDir"`
	Worktree      string `json:"worktree"`
	Branch        string `json:"branch"`
	LastOutputSec *int64 `json:"lastOutputAgeSeconds"`
}

// LiveIssues reads the issues of `backlog status --json`.
func (r *BacklogRepo) LiveIssues(t *testing.T) []IssueLive {
	t.Helper()
	is, err := r.TryLiveIssues()
	if err != nil {
		t.Fatal(err)
	}
	return is
}

// TryLiveIssues is LiveIssues returning its error.
func (r *BacklogRepo) TryLiveIssues() ([]IssueLive, error) {
	res := r.RunEnv(context.Background(), "backlog", "status", "--json")
	var v struct {
		Issues []IssueLive `json:"issues"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &v); err != nil {
		return nil, fmt.Errorf("status --json: %w\n%s%s", err, res.Stdout, res.Stderr)
	}
	return v.Issues, nil
}
