package gitops

import (
	"context"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// The branch a clone has checked out is named, also before its first
// commit; a detached HEAD has none.
func TestCurrentBranchIsTheCheckedOutOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clone := gittest.CloneOf(t, gittest.EmptyOrigin(t))
	gittest.Run(t, clone, "symbolic-ref", "HEAD", "refs/heads/trunk")
	r, err := Open(ctx, clone, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := r.CurrentBranch(ctx); err != nil || b != "trunk" {
		t.Fatalf("unborn trunk: %q %v", b, err)
	}
	gittest.Run(t, clone, "commit", "-q", "--allow-empty", "-m", "one")
	gittest.Run(t, clone, "checkout", "-q", "--detach")
	if b, err := r.CurrentBranch(ctx); err != nil || b != "" {
		t.Fatalf("detached: %q %v, want none", b, err)
	}
}
