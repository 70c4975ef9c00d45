package gitops

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// plantEverything makes the worker clone at dir as hostile as its own
// git directory allows: every hook the supervisor's git could run, an
// fsmonitor, a clean filter on every file and a command for alternate
// refs, each writing its name to the returned marker file when run.
func plantEverything(t *testing.T, dir string) string {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "ran")
	prog := filepath.Join(t.TempDir(), "evil")
	writeFile(t, prog, "#!/bin/sh\necho \"$0 $*\" >> "+marker+"\ncat\n")
	if err := os.Chmod(prog, 0o755); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(dir, ".git", "hooks")
	for _, h := range []string{"pre-push", "reference-transaction", "post-checkout", "post-merge", "pre-commit",
		"post-commit", "pre-receive", "update", "post-update", "pre-auto-gc", "fsmonitor-watchman", "post-index-change"} {
		writeFile(t, filepath.Join(hooks, h), "#!/bin/sh\necho "+h+" >> "+marker+"\n")
		if err := os.Chmod(filepath.Join(hooks, h), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{"core.fsmonitor": prog, "filter.evil.clean": prog, "filter.evil.smudge": prog,
		"filter.evil.process": prog, "core.alternateRefsCommand": prog, "diff.external": prog, "core.hooksPath": hooks} {
		gitT(t, dir, "config", k, v)
	}
	writeFile(t, filepath.Join(dir, ".gitattributes"), "* filter=evil diff=evil\n")
	writeFile(t, filepath.Join(dir, ".git", "info", "attributes"), "* filter=evil\n")
	return marker
}

// Everything the supervisor does with a worker's clone — count its
// commits and dirty files, fetch its branch, snapshot it, diff it,
// remove it — runs nothing the worker put in its clone: no hook, no
// fsmonitor, no filter, no command of its config.
func TestReadingAWorkerCheckoutRunsNothingOfIts(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	dir := filepath.Join(t.TempDir(), "w")
	workerClone(t, r, dir, "wave/h-i1", "origin/main", nil)
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
	gitT(t, dir, "add", "a.txt")
	gitT(t, dir, "commit", "-q", "-m", "a")
	marker := plantEverything(t, dir)
	writeFile(t, filepath.Join(dir, "dirty.txt"), "d\n")
	writeFile(t, filepath.Join(dir, "a.txt"), "a changed\n")
	ctx := ctxT(t)

	head, dirty, err := r.CheckoutState(ctx, dir)
	if err != nil || head != gitT(t, dir, "rev-parse", "HEAD") || dirty != 3 { // a.txt, dirty.txt, .gitattributes
		t.Fatalf("state: %s %d %v", head, dirty, err)
	}
	if n, err := r.CheckoutAhead(ctx, dir, head, "origin/main"); err != nil || n != 1 {
		t.Fatalf("ahead %d %v", n, err)
	}
	if sha, ok, err := r.FetchFromCheckout(ctx, dir, "wave/h-i1"); err != nil || !ok || sha != head {
		t.Fatalf("fetch: %s %v %v", sha, ok, err)
	}
	snap, err := r.SnapshotCheckout(ctx, dir, "refs/wave/salvage/1/a1", "salvage")
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, r.Dir, "show", snap+":a.txt"); got != "a changed" {
		t.Errorf("snapshot's a.txt %q", got)
	}
	if d, err := r.DiffCheckout(ctx, dir, "wave/h-i1", "origin/main", 1<<20); err != nil || !strings.Contains(d, "+++ b/a.txt") {
		t.Errorf("diff: %v\n%s", err, d)
	}
	if err := r.RemoveCheckout(ctx, dir, "refs/heads/wave/h-i1"); err == nil {
		t.Error("a checkout with uncommitted files was removed")
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("the worker's hooks or programs ran in the supervisor's git:\n%s", b)
	}
}

// A salvage snapshot of a worker's clone holds what it staged and never
// committed (an object only the worker's store has) and what it
// force-added, every object of it in the user's clone; the clone is left
// as it was.
func TestASnapshotOfAWorkerCloneHoldsWorkOnlyItsStoreHad(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	dir := filepath.Join(t.TempDir(), "w")
	workerClone(t, r, dir, "wave/s-i2", "origin/main", nil)
	writeFile(t, filepath.Join(dir, ".gitignore"), "*.log\n")
	writeFile(t, filepath.Join(dir, "c.txt"), "committed in the clone\n")
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "c")
	writeFile(t, filepath.Join(dir, "staged.txt"), "staged only\n")
	gitT(t, dir, "add", "staged.txt")
	writeFile(t, filepath.Join(dir, "forced.log"), "force-added\n")
	gitT(t, dir, "add", "-f", "forced.log")
	writeFile(t, filepath.Join(dir, "debug.log"), "ignored\n")
	writeFile(t, filepath.Join(dir, "new/untracked.txt"), "untracked\n")
	before := captureState(t, dir)
	commit, err := r.SnapshotCheckout(ctxT(t), dir, "refs/wave/salvage/2/a1", "salvage #2")
	if err != nil {
		t.Fatal(err)
	}
	after := captureState(t, dir)
	if before.status != after.status || before.stage != after.stage || before.head != after.head {
		t.Fatalf("the clone changed:\nbefore %+v\nafter  %+v", before, after)
	}
	if got := gitT(t, r.Dir, "rev-parse", commit+"^"); got != before.head {
		t.Fatalf("snapshot parent %s, want the clone's HEAD %s", got, before.head)
	}
	tree := strings.Fields(gitT(t, r.Dir, "ls-tree", "-r", "--name-only", commit))
	for _, want := range []string{"c.txt", "staged.txt", "forced.log", "new/untracked.txt", ".gitignore"} {
		if !slices.Contains(tree, want) {
			t.Errorf("snapshot lacks %s: %v", want, tree)
		}
	}
	if slices.Contains(tree, "debug.log") {
		t.Error("snapshot has an ignored file")
	}
	// Every object reachable from the snapshot is in the user's clone
	// itself (the worker's store is gone once its clone is).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	gitT(t, r.Dir, "rev-list", "--objects", commit)
	if got := gitT(t, r.Dir, "cat-file", "-p", commit+":staged.txt"); got != "staged only" {
		t.Errorf("staged.txt %q", got)
	}
}

// The worker's branch comes into the clone as the worker left it, even
// rewritten; a branch the worker deleted changes nothing.
func TestFetchFromCheckoutFollowsTheWorkersBranch(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	dir := filepath.Join(t.TempDir(), "w")
	workerClone(t, r, dir, "wave/f-i3", "origin/main", nil)
	writeFile(t, filepath.Join(dir, "x.txt"), "1\n")
	gitT(t, dir, "add", "x.txt")
	gitT(t, dir, "commit", "-q", "-m", "one")
	gitT(t, dir, "commit", "-q", "--amend", "-m", "one, amended")
	tip := gitT(t, dir, "rev-parse", "HEAD")
	if sha, ok, err := r.FetchFromCheckout(ctxT(t), dir, "wave/f-i3"); err != nil || !ok || sha != tip {
		t.Fatalf("fetch: %s %v %v, want %s", sha, ok, err, tip)
	}
	gitT(t, dir, "checkout", "-q", "--detach")
	gitT(t, dir, "branch", "-D", "wave/f-i3")
	if _, ok, err := r.FetchFromCheckout(ctxT(t), dir, "wave/f-i3"); err != nil || ok {
		t.Fatalf("fetch of a deleted branch: %v %v", ok, err)
	}
	if got := gitT(t, r.Dir, "rev-parse", "refs/heads/wave/f-i3"); got != tip {
		t.Fatalf("the clone's copy moved to %s", got)
	}
}

// The checkout's HEAD read from its files is git's: on a branch, a
// packed branch, detached; a HEAD naming something outside refs/ or a
// link out of the checkout is not followed.
func TestCheckoutHeadReadsTheCheckoutsOwnFiles(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	dir := filepath.Join(t.TempDir(), "w")
	workerClone(t, r, dir, "wave/hd-i1", "origin/main", nil)
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n")
	gitT(t, dir, "add", "a.txt")
	gitT(t, dir, "commit", "-q", "-m", "a")
	want := gitT(t, dir, "rev-parse", "HEAD")
	for _, step := range []func(){
		func() {},
		func() { gitT(t, dir, "pack-refs", "--all") },
		func() { gitT(t, dir, "checkout", "-q", "--detach") },
	} {
		step()
		if got, ok, err := readRef(dir, "HEAD"); !ok || err != nil || got != want {
			t.Errorf("readRef HEAD = %q %v %v, want %s", got, ok, err, want)
		}
		if got, err := r.CheckoutHead(ctxT(t), dir); err != nil || got != want {
			t.Errorf("CheckoutHead = %q %v, want %s", got, err, want)
		}
	}
	writeFile(t, filepath.Join(dir, ".git", "HEAD"), "ref: ../../../etc/passwd\n")
	if _, ok, err := readRef(dir, "HEAD"); ok || err == nil {
		t.Error("a HEAD naming a path out of refs/ was followed")
	}
	if _, err := r.CheckoutHead(ctxT(t), dir); err == nil {
		t.Error("CheckoutHead read a HEAD naming a path out of refs/")
	} else if _, ok := IsCheckoutError(err); !ok {
		t.Errorf("CheckoutHead: %v, want a CheckoutError (the worker's failure)", err)
	}
}
