package gitops

import (
	"path/filepath"
	"testing"
)

// CheckoutBranch is the worker branch as the checkout holds it — a commit
// made there after the clone last fetched it included — whether the ref
// is loose or packed, and nothing of this clone moves while it is read.
func TestCheckoutBranchReadsTheWorkersBranchWithoutFetchingIt(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	ctx := ctxT(t)
	dir := filepath.Join(t.TempDir(), "w")
	const branch = "wave/cb-i1"
	workerClone(t, r, dir, branch, "origin/main", nil)
	gitT(t, dir, "-c", "core.hooksPath=/dev/null", "commit", "-q", "--allow-empty", "-m", "after the run")
	want := gitT(t, dir, "rev-parse", "HEAD")[:40]
	before := gitT(t, r.Dir, "for-each-ref")
	for _, packed := range []bool{false, true} {
		if packed {
			gitT(t, dir, "pack-refs", "--all")
		}
		got, ok, err := r.CheckoutBranch(ctx, dir, branch)
		if err != nil || !ok || got != want {
			t.Fatalf("packed %v: CheckoutBranch = %q, %v, %v; want the checkout's %s", packed, got, ok, err, want)
		}
	}
	if _, ok, err := r.CheckoutBranch(ctx, dir, "wave/cb-none"); err != nil || ok {
		t.Errorf("a branch the checkout lacks: ok %v, %v; want not ok, no error", ok, err)
	}
	if after := gitT(t, r.Dir, "for-each-ref"); after != before {
		t.Errorf("reading the checkout moved the clone's refs:\n%s\nthen\n%s", before, after)
	}
}
