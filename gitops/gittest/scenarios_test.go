package gittest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// A project set up in the clone of an empty origin and pushed is what a
// later clone sees: main with the files, origin/HEAD naming main.
func TestAProjectPushedFromACloneOfAnEmptyOriginIsItsBase(t *testing.T) {
	origin := gittest.EmptyOrigin(t)
	clone := gittest.CloneOf(t, origin)
	if err := os.WriteFile(filepath.Join(clone, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gittest.PushBase(t, clone, "first")
	if got, ok := gittest.File(origin, "main", "a.txt"); !ok || got != "one\n" {
		t.Fatalf("origin main a.txt = %q %v", got, ok)
	}
	if head := gittest.Run(t, clone, "symbolic-ref", "refs/remotes/origin/HEAD"); head != "refs/remotes/origin/main" {
		t.Errorf("origin/HEAD is %s", head)
	}
}

// A wave branch on the origin starts at main, and a commit on it made
// without a checkout moves it past main, which stays an ancestor.
func TestACommitOnTheWaveBranchOfAnOriginBuildsOnMain(t *testing.T) {
	origin := gittest.OriginWithWaveBranch(t, "wave/x", map[string]string{"README.md": "r\n"})
	main := gittest.Ref(origin, "refs/heads/main")
	if main == "" || gittest.Ref(origin, "refs/heads/wave/x") != main {
		t.Fatalf("wave branch %q, main %q", gittest.Ref(origin, "refs/heads/wave/x"), main)
	}
	tip := gittest.CommitOn(t, origin, "wave/x", "", map[string]string{"w.txt": "w"})
	if !gittest.IsAncestor(origin, main, tip) || !gittest.HasPath(origin, tip, "README.md") || !gittest.HasPath(origin, tip, "w.txt") {
		t.Errorf("commit %s does not build on main %s", tip, main)
	}
	if gittest.Ref(origin, "refs/heads/absent") != "" {
		t.Error("an absent ref has a sha")
	}
}
