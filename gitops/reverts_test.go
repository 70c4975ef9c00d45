package gitops

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// A repository whose main merged a wave branch (two issue merges in it)
// with a merge commit, as a final pull request does.
func revertRepo(t *testing.T) (dir, issue1, issue2, waveMerge string) {
	t.Helper()
	dir = t.TempDir()
	gittest.Init(t, dir)
	git := func(args ...string) string { return gittest.Run(t, dir, args...) }
	commit := func(file, msg string) string {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(msg+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", file)
		git("commit", "-q", "-m", msg)
		return git("rev-parse", "HEAD")
	}
	commit("README", "base")
	git("branch", "-M", "main")
	git("checkout", "-q", "-b", "wave/x")
	for i, f := range []string{"greet", "bye"} {
		git("checkout", "-q", "-b", "wave/x-i"+f)
		commit(f, "work on "+f)
		git("checkout", "-q", "wave/x")
		git("merge", "-q", "--no-ff", "-m", "merge #"+f, "wave/x-i"+f)
		if i == 0 {
			issue1 = git("rev-parse", "HEAD")
		} else {
			issue2 = git("rev-parse", "HEAD")
		}
	}
	git("checkout", "-q", "main")
	commit("other", "unrelated work on main")
	git("merge", "-q", "--no-ff", "-m", "Merge pull request #7 from wave/x", "wave/x")
	return dir, issue1, issue2, git("rev-parse", "HEAD")
}

func TestRevertingOneIssuesMergeRevertsThatIssueOnly(t *testing.T) {
	t.Parallel()
	dir, i1, i2, _ := revertRepo(t)
	gittest.Run(t, dir, "revert", "--no-edit", "-m", "1", i1)
	got, err := Reverted(context.Background(), dir, "main", []string{i1, i2})
	if err != nil {
		t.Fatal(err)
	}
	if got[i1] == "" || got[i2] != "" {
		t.Fatalf("reverted %v, want only the first issue's merge %s", got, i1)
	}
}

func TestRevertingTheWavesMergeRevertsEveryIssueInIt(t *testing.T) {
	t.Parallel()
	dir, i1, i2, wm := revertRepo(t)
	gittest.Run(t, dir, "revert", "--no-edit", "-m", "1", wm)
	revert := gittest.Run(t, dir, "rev-parse", "HEAD")
	got, err := Reverted(context.Background(), dir, "main", []string{i1, i2})
	if err != nil {
		t.Fatal(err)
	}
	if got[i1] != revert || got[i2] != revert {
		t.Fatalf("reverted %v, want both issues reverted by %s", got, revert)
	}
}

func TestARevertThatWasRevertedCountsForNothing(t *testing.T) {
	t.Parallel()
	dir, i1, i2, wm := revertRepo(t)
	gittest.Run(t, dir, "revert", "--no-edit", "-m", "1", wm)
	gittest.Run(t, dir, "revert", "--no-edit", "HEAD")
	got, err := Reverted(context.Background(), dir, "main", []string{i1, i2})
	if err != nil || len(got) != 0 {
		t.Fatalf("reverted %v (%v), want none: the revert was reapplied", got, err)
	}
	if got, err := Reverted(context.Background(), dir, "no-such-branch", []string{i1}); err != nil || len(got) != 0 {
		t.Fatalf("a branch the clone lacks: %v %v", got, err)
	}
}
