package kubernetes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// TestKubePodsThatPushAForgedTreeOrAnOrphanAreParkedWhileTheOtherMerges:
// three pods push their worker's commits to their candidate refs on
// origin. Pod 1's worker committed a tree no git writes — a
// .git/hooks/post-checkout entry, made with git mktree — and pod 2's an
// orphan branch, sharing no history with the wave branch. The
// supervisor's fetch refuses both, as it refuses them from a local
// worker's clone: issues 1 and 2 are parked saying why, nothing of pod
// 1's tree reaches origin's wave branch, the run never takes either for
// an outage, and issue 3 is merged.
func TestKubePodsThatPushAForgedTreeOrAnOrphanAreParkedWhileTheOtherMerges(t *testing.T) {
	k := onKube(t, e2etest.NewBacklogRepo(t))
	podShellWorkers(t, k.BacklogRepo, `gitc() { git -c user.name=w -c user.email=w@example.com "$@"; }
case $n in
1)
  hook=$(printf '#!/bin/sh\ntouch %s/ran\n' "$CTL" | git hash-object -w --stdin)
  hooks=$(printf '100755 blob %s\tpost-checkout\n' "$hook" | git mktree)
  dotgit=$(printf '040000 tree %s\thooks\n' "$hooks" | git mktree)
  mkdir -p src/i1 && echo w > src/i1/w && git add -A && gitc commit -qm work
  tree=$( (git ls-tree HEAD; printf '040000 tree %s\t.git\n' "$dotgit") | git mktree)
  git update-ref HEAD "$(gitc commit-tree "$tree" -p HEAD -m forged)"
  echo "[backlog-result] state=done detail=forged a tree"; exit 0 ;;
2)
  b=$(git symbolic-ref --short HEAD)
  git checkout -q --orphan alone && gitc commit -qm alone && git branch -f -- "$b" alone && git checkout -q "$b"
  echo "[backlog-result] state=done detail=an orphan"; exit 0 ;;
esac
mkdir -p src/i$n && echo "work of #$n" > src/i$n/done.txt && git add -A && gitc commit -qm "Work on #$n"
echo "[backlog-result] state=done detail=worked on #$n"
`, k.ctl)
	for n := 1; n <= 3; n++ {
		k.Issue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: src/i%d/**", n))
	}
	k.CommitIssues(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res := k.RunWith(ctx, k.Env(), "backlog", "run", "--issues", "1,2,3", "--no-dashboard")
	run, _ := e2etest.BacklogEvents(t, k.BacklogRepo)
	if res.Code != 43 {
		t.Fatalf("run: exit %d, want 43 (#1 and #2 parked)\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for n, want := range map[int]string{1: "refuse", 2: "shares no history", 3: ""} {
		is := run.Issues[n]
		switch {
		case want == "" && is.State != backlog.StateMerged:
			t.Errorf("#%d: %s (%s), want merged", n, is.State, is.Detail)
		case want != "" && (is.State != backlog.StateParked || !strings.Contains(is.Detail, want)):
			t.Errorf("#%d: %s (%s), want parked saying %q", n, is.State, is.Detail, want)
		}
	}
	if strings.Contains(res.Stdout, "waiting:") {
		t.Errorf("a pod's forged push was taken for an outage:\n%s", res.Stdout)
	}
	if out := e2etest.GitIn(t, k.Origin, "ls-tree", "-r", "--name-only", run.Info.WaveBranch); strings.Contains(out, ".git/") {
		t.Errorf("origin's wave branch holds pod 1's .git entry:\n%s", out)
	}
	if !gittest.HasPath(k.Origin, run.Info.WaveBranch, "src/i3/done.txt") {
		t.Error("#3's work is not on the wave branch")
	}
	if _, err := os.Stat(filepath.Join(k.ctl, "ran")); err == nil {
		t.Error("the hook pod 1 committed ran")
	}
}

// podShellWorkers makes r's workers shell agents (bash) running script in
// their pods, with $n the issue and $CTL the test's directory ctl.
func podShellWorkers(t *testing.T, r *e2etest.BacklogRepo, script, ctl string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "worker.sh")
	pre := "#!/bin/bash\nn=$WAVE_ISSUE_NUMBER\nCTL=" + e2etest.ShellQuote(ctl) + "\n"
	if err := os.WriteFile(path, []byte(pre+script), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil || !e2etest.WorkerExecutor.Match(cfg) {
		t.Fatalf("no scaffolded backlog.executor block (%v):\n%s", err, cfg)
	}
	block := fmt.Sprintf("  executor:\n    id: shell\n    shell.command: %q", "bash "+path)
	r.Write("wave.config.yaml", e2etest.WorkerExecutor.ReplaceAllLiteralString(string(cfg), block))
}
