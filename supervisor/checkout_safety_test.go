package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// TestRunGoesOnWhileTheUserHasTheWaveBranchCheckedOut: while #1's merge
// is verified, the user checks the wave branch out in a worktree of their
// clone, edits a file and commits something there. The run merges every
// issue and exits 0; the user's worktree is never moved (HEAD at their
// commit, nothing changed but their edit) and their commit stays theirs
// (not pushed with the merges).
func TestRunGoesOnWhileTheUserHasTheWaveBranchCheckedOut(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "One", "Files: a/**")
	f.issue(2, "Two", "Files: b/**")
	f.issue(3, "Three", "Files: c/**")
	look := filepath.Join(filepath.Dir(f.root), "look")
	f.verifyGate(`if [ "$WAVE_ISSUE_NUMBER" = 1 ] && [ ! -e ` + shellQuote(look) + ` ]; then
  set -e
  cd ` + shellQuote(f.root) + `
  wave=$(git for-each-ref --format='%(refname:strip=2)' refs/heads/wave/ | grep -v -- '-i[0-9]*$' | head -n1)
  git worktree add -q ` + shellQuote(look) + ` "$wave"
  cd ` + shellQuote(look) + `
  echo mine > notes.txt && git add notes.txt && git -c user.name=u -c user.email=u@example.com commit -q -m "my note"
  echo "my edit" >> README.md
fi
exit 0
`)
	res := f.run(1, 2, 3)
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 3 {
		t.Fatalf("run: exit %d, %v, tally %+v; want all three merged with the wave branch checked out", res.ExitCode, res.err, res.Tally)
	}
	r, _, _ := runlog.Read(res.Dir)
	head := git(t, look, "rev-parse", "HEAD")
	if got := git(t, look, "log", "-1", "--format=%s"); got != "my note" {
		t.Errorf("the user's worktree is at %q, want their own commit", got)
	}
	if got := git(t, look, "symbolic-ref", "HEAD"); got != "refs/heads/"+r.Info.WaveBranch {
		t.Errorf("the user's worktree is on %s", got)
	}
	if st := git(t, look, "status", "--porcelain"); st != "M README.md" {
		t.Errorf("the user's worktree status %q, want their edit only (a stale tree shows the merges as changes)", st)
	}
	if data, err := os.ReadFile(filepath.Join(look, "README.md")); err != nil || !strings.Contains(string(data), "my edit") {
		t.Errorf("the user's edit is gone: %q %v", data, err)
	}
	if git(t, f.root, "rev-parse", "refs/heads/"+r.Info.WaveBranch) != head {
		t.Error("the local wave branch moved off the user's commit")
	}
	if _, ok := f.originFile(r.Info.WaveBranch, "notes.txt"); ok {
		t.Error("the user's local commit was pushed with the merges")
	}
	for n := 1; n <= 3; n++ {
		if _, ok := f.originFile(r.Info.WaveBranch, "backlog-work/issue-"+itoa(n)+".md"); !ok {
			t.Errorf("origin's wave branch lacks #%d's work", n)
		}
	}
}
