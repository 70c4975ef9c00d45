package gitops

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

func upper(_ string, old []byte) ([]byte, bool, error) {
	return bytes.ToUpper(old), true, nil
}

// CommitEdits moves origin's branch by one commit of the edits, read from
// the branch itself: a second call finds them there and commits nothing.
func TestCommitEditsIsOneCommitOnTheRemoteAndIdempotent(t *testing.T) {
	origin := newOrigin(t)
	r := newClone(t, origin)
	ctx := ctxT(t)
	before := originRef(t, origin, "refs/heads/main")
	commit, err := r.CommitEdits(ctx, "main", "shout", []string{"README.md"}, upper)
	if err != nil || commit == "" {
		t.Fatalf("CommitEdits: %q %v", commit, err)
	}
	if got := originRef(t, origin, "refs/heads/main"); got != commit {
		t.Fatalf("origin main at %s, want the edit commit %s", got, commit)
	}
	if parent := strings.TrimSpace(gitT(t, r.Dir, "rev-parse", commit+"^")); parent != before {
		t.Errorf("the edit's parent is %s, want the old tip %s", parent, before)
	}
	if out, _ := gittest.File(origin, "main", "README.md"); out != "HELLO\n" {
		t.Errorf("README on origin = %q", out)
	}
	again, err := r.CommitEdits(ctx, "main", "shout", []string{"README.md"}, upper)
	if err != nil || again != "" {
		t.Errorf("second CommitEdits: %q %v, want nothing to commit", again, err)
	}
}

// A push by someone else between the fetch and the push loses the lease:
// the edit is rebuilt on the new tip, never forced over it.
func TestCommitEditsNeverOverwritesAConcurrentPush(t *testing.T) {
	origin := newOrigin(t)
	r := newClone(t, origin)
	other := newClone(t, origin)
	ctx := ctxT(t)
	pushed := false
	edit := func(p string, old []byte) ([]byte, bool, error) {
		if !pushed {
			pushed = true
			commitOn(t, other.Dir, "main", "refs/remotes/origin/main", map[string]string{"other.txt": "theirs\n"})
			if err := other.Push(context.Background(), "refs/heads/main", "main"); err != nil {
				t.Fatal(err)
			}
		}
		return upper(p, old)
	}
	commit, err := r.CommitEdits(ctx, "main", "shout", []string{"README.md"}, edit)
	if err != nil || commit == "" {
		t.Fatalf("CommitEdits: %q %v", commit, err)
	}
	for _, f := range []string{"other.txt", "README.md"} {
		if !gittest.HasPath(origin, "main", f) {
			t.Errorf("%s is not on origin main", f)
		}
	}
	if out, _ := gittest.File(origin, "main", "README.md"); out != "HELLO\n" {
		t.Errorf("README on origin = %q", out)
	}
}
