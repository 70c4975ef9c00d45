package gitops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWaveNameReservedByOneRunAndRecognisedByIt: the first run's
// reservation is fresh, a repeat of its own commit (a restart) is held but
// not fresh, another run's commit is refused; freeing is conditional on
// the commit and idempotent.
func TestWaveNameReservedByOneRunAndRecognisedByIt(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	a, b := newClone(t, origin), newClone(t, origin)
	const wave = "wave/2025-01-01-demo"
	ca, err := a.WaveNameCommit(ctxT(t), wave, "run-a")
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.WaveNameCommit(ctxT(t), wave, "run-b")
	if err != nil || cb == ca {
		t.Fatalf("commits %s %s, %v: want two distinct", ca, cb, err)
	}
	if held, fresh, err := a.ReserveWaveName(ctxT(t), wave, ca); err != nil || !held || !fresh {
		t.Fatalf("first reservation: held %v fresh %v, %v", held, fresh, err)
	}
	if held, fresh, err := a.ReserveWaveName(ctxT(t), wave, ca); err != nil || !held || fresh {
		t.Fatalf("the same run again: held %v fresh %v, %v; want held, not fresh", held, fresh, err)
	}
	if held, _, err := b.ReserveWaveName(ctxT(t), wave, cb); err != nil || held {
		t.Fatalf("another run: held %v, %v; want refused", held, err)
	}
	if err := b.FreeWaveName(ctxT(t), wave, cb); err != nil || originRef(t, origin, waveNameRef(wave)) != ca {
		t.Fatalf("freeing with another run's commit: %v; the reservation must stay", err)
	}
	for range 2 {
		if err := a.FreeWaveName(ctxT(t), wave, ca); err != nil {
			t.Fatal(err)
		}
	}
	if got := originRef(t, origin, waveNameRef(wave)); got != "" {
		t.Fatalf("reservation still at %s after freeing", got)
	}
}

// TestStaleScratchWorktreesOfDeadProcessesRemoved: a scratch checkout
// (or a scratch worktree an older version registered) whose owner pid is
// dead is removed with its directory; one of a live process, and any
// other worktree, is left.
func TestStaleScratchWorktreesOfDeadProcessesRemoved(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	r.scratchDir = t.TempDir()
	add := func(name string) string {
		dir := filepath.Join(r.scratchDir, name, "tree")
		gitT(t, r.Dir, "worktree", "add", "--quiet", "--detach", dir, "HEAD")
		return dir
	}
	dead, live := add("wave-verify-111-abc"), add("wave-verify-222-def")
	other := filepath.Join(t.TempDir(), "wave-verify-111-x", "tree")
	gitT(t, r.Dir, "worktree", "add", "--quiet", "--detach", other, "HEAD")
	checkout := filepath.Join(r.scratchDir, "wave-verify-333-ghi", "tree")
	writeFile(t, filepath.Join(checkout, "f"), "left by a killed verify")
	n, err := r.RemoveStaleScratch(ctxT(t), func(pid int) bool { return pid == 222 })
	if err != nil || n != 2 {
		t.Fatalf("removed %d, %v; want 2", n, err)
	}
	if exists(filepath.Dir(checkout)) {
		t.Error("the dead process's scratch checkout is still there")
	}
	list := gitT(t, r.Dir, "worktree", "list", "--porcelain")
	if strings.Contains(list, dead) || !strings.Contains(list, live) || !strings.Contains(list, other) {
		t.Fatalf("worktrees after the sweep:\n%s", list)
	}
	if _, err := os.Stat(filepath.Dir(dead)); !os.IsNotExist(err) {
		t.Errorf("the dead process's scratch dir is still there: %v", err)
	}
}
