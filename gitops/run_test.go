package gitops

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A git command cut short (its caller's context cancelled: a supervisor
// stopped with SIGTERM, or git's own timeout) leaves no lock file behind:
// a ref update killed while it held refs/….lock used to leave the lock,
// and every later supervisor waited on "another git process holds a
// lock" until it gave up.
func TestAGitCommandCutShortLeavesNoLockBehind(t *testing.T) {
	origin := newOrigin(t)
	r := newClone(t, origin)
	gate := t.TempDir()
	t.Cleanup(func() { _ = os.WriteFile(filepath.Join(gate, "release"), nil, 0o644) })
	// The hook holds the ref update in its prepared state (its lock
	// taken) until the test releases it; its output goes nowhere, so a
	// hook outliving git keeps no pipe of ours open.
	// Our calls run no hooks (harden.go); this one is let run, as the
	// way to keep git inside its ref transaction.
	hooks := t.TempDir()
	r.rn.config = append(r.rn.config, "core.hooksPath="+hooks)
	writeFile(t, filepath.Join(hooks, "reference-transaction"), `#!/bin/sh
exec >/dev/null 2>&1
cat >/dev/null
[ "$1" = prepared ] || exit 0
[ -e "`+gate+`/release" ] && exit 0
touch "`+gate+`/held"
i=0; until [ -e "`+gate+`/release" ]; do i=$((i+1)); [ $i -gt 1200 ] && exit 1; sleep 0.05; done
`)
	if err := os.Chmod(filepath.Join(hooks, "reference-transaction"), 0o755); err != nil {
		t.Fatal(err)
	}
	head := gitT(t, r.Dir, "rev-parse", "HEAD")[:40]
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := r.git(ctx, r.Dir, "update-ref", "refs/wave/merge/x", head)
		done <- err
	}()
	waitUntil(t, "the ref update to hold its lock", func() bool {
		_, err := os.Stat(filepath.Join(gate, "held"))
		return err == nil
	})
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cut update-ref succeeded")
	}
	lock := filepath.Join(r.Dir, ".git", "refs", "wave", "merge", "x.lock")
	if _, err := os.Stat(lock); err == nil {
		t.Fatalf("%s is left behind: the next git to update the ref fails on it", lock)
	}
	if err := os.WriteFile(filepath.Join(gate, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.git(ctxT(t), r.Dir, "update-ref", "refs/wave/merge/x", head); err != nil {
		t.Fatalf("the next update of the ref: %v", err)
	}
}
