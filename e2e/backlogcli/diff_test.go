package backlogcli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// TestBacklogDiffPrintsTheWorkersChangeEscaped: `backlog diff N` prints
// a parked worker's branch against the wave branch (its own commits
// only) and a merged issue's merge, with a control sequence in the
// worker's file shown escaped, never sent to the terminal.
func TestBacklogDiffPrintsTheWorkersChangeEscaped(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fails verify", "Files: backlog-work/**")
	r.Issue(2, "Merges", "Files: backlog-work/**")
	cfg, _ := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	r.Write("wave.config.yaml", strings.Replace(string(cfg), "\nbacklog:\n",
		"\nbacklog:\n  reworkRounds: 0\n  verify: [sh, -c, 'test \"$WAVE_ISSUE_NUMBER\" != 1']\n", 1))
	ctx := context.Background()
	if res := r.RunEnv(ctx, "backlog", "run", "--issues", "1,2", "--no-dashboard"); res.Code != e2etest.ExitNeedsHuman {
		t.Fatalf("run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	st := r.RunEnv(ctx, "backlog", "status", "--json")
	var v struct {
		Issues []struct {
			Number   int    `json:"number"`
			State    string `json:"state"`
			Worktree string `json:"worktree"`
		} `json:"issues"`
	}
	if err := json.Unmarshal([]byte(st.Stdout), &v); err != nil || len(v.Issues) != 2 || v.Issues[0].State != "parked" {
		t.Fatalf("status: %v %+v", err, v)
	}
	// The parked worker's branch gets a file that tries to clear the
	// screen and set the window title.
	wt := v.Issues[0].Worktree
	if err := os.WriteFile(filepath.Join(wt, "evil.txt"), []byte("hello \x1b[2J\x1b]0;pwned\x07 world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e2etest.GitIn(t, wt, "add", "evil.txt")
	e2etest.GitIn(t, wt, "commit", "-q", "-m", "evil")

	d := r.RunEnv(ctx, "backlog", "diff", "1")
	if d.Code != 0 {
		t.Fatalf("diff 1: exit %d %s", d.Code, d.Stderr)
	}
	if strings.ContainsAny(d.Stdout, "\x1b\x07") {
		t.Fatalf("raw control characters reached the terminal: %q", d.Stdout)
	}
	for _, want := range []string{"+++ b/backlog-work/issue-1.md", "+++ b/evil.txt", `+hello \x1b[2J\x1b]0;pwned\x07 world`} {
		if !strings.Contains(d.Stdout, want) {
			t.Errorf("diff 1 lacks %q:\n%s", want, d.Stdout)
		}
	}
	if strings.Contains(d.Stdout, "issue-2.md") {
		t.Errorf("diff 1 shows #2's change, which is on the wave branch:\n%s", d.Stdout)
	}
	if d := r.RunEnv(ctx, "backlog", "diff", "2"); d.Code != 0 || !strings.Contains(d.Stdout, "+++ b/backlog-work/issue-2.md") || strings.Contains(d.Stdout, "issue-1.md") {
		t.Errorf("diff 2 (merged): exit %d\n%s%s", d.Code, d.Stdout, d.Stderr)
	}
	if d := r.RunEnv(ctx, "backlog", "diff", "99"); d.Code != e2etest.ExitUsage || !strings.Contains(d.Stderr, "no issue #99 in backlog run") {
		t.Errorf("diff 99: exit %d %s; want 2 naming the missing issue", d.Code, d.Stderr)
	}
}

// A worker that has committed nothing has no diff: `backlog diff N`
// says so (on stderr, so a pipe into git apply reads nothing) and names
// the uncommitted work its worktree holds, instead of printing nothing.
func TestBacklogDiffOfAWorkerWithNoCommitSaysSo(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Asks before committing", "Files: a/**\n\nlocal-agent: commit=none dirty=a/wip.md result=needs-input question=\"Which API?\"")
	r.Issue(2, "Merges", "Files: b/**")
	r.CommitIssues(t)
	ctx := context.Background()
	if res := r.RunEnv(ctx, "backlog", "run", "--issues", "1,2", "--no-dashboard"); res.Code != e2etest.ExitNeedsHuman {
		t.Fatalf("run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	is := r.LiveIssues(t)
	if len(is) != 2 || is[0].Number != 1 || is[0].Worktree == "" {
		t.Fatalf("issues %+v", is)
	}
	d := r.RunEnv(ctx, "backlog", "diff", "1")
	want := "backlog diff: #1 has no committed change: its branch " + is[0].Branch + " has no commit beyond "
	if d.Code != 0 || d.Stdout != "" || !strings.HasPrefix(d.Stderr, want) {
		t.Fatalf("diff 1: exit %d\nstdout %q\nstderr %q\nwant a line starting %q", d.Code, d.Stdout, d.Stderr, want)
	}
	if tail := "; its worktree " + is[0].Worktree + " has 1 uncommitted change(s), which no diff shows (git -C " + is[0].Worktree + " status)\n"; !strings.HasSuffix(d.Stderr, tail) {
		t.Errorf("diff 1 does not name the uncommitted work:\n%s", d.Stderr)
	}
}
