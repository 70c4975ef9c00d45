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
	t.Parallel()
	origin := newOrigin(t)
	r := newClone(t, origin)
	ctx := ctxT(t)
	before := originRef(t, origin, "refs/heads/main")
	res, err := r.CommitEdits(ctx, "main", "", "shout", []string{"README.md"}, upper)
	commit := res.Commit
	if err != nil || commit == "" || res.Tip != commit {
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
	again, err := r.CommitEdits(ctx, "main", commit, "shout", []string{"README.md"}, upper)
	if err != nil || again.Commit != "" || again.Tip != commit {
		t.Errorf("second CommitEdits: %+v %v, want nothing to commit on %s", again, err, commit)
	}
}

// A push by someone else between the fetch and the push loses the lease:
// the edit is rebuilt on the new tip, never forced over it.
func TestCommitEditsNeverOverwritesAConcurrentPush(t *testing.T) {
	t.Parallel()
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
	res, err := r.CommitEdits(ctx, "main", "", "shout", []string{"README.md"}, edit)
	if err != nil || res.Commit == "" {
		t.Fatalf("CommitEdits: %+v %v", res, err)
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

// Many files are read and written in one commit with their modes kept;
// a file the edit leaves alone is not touched.
func TestCommitEditsOfManyFilesKeepsTheirModes(t *testing.T) {
	t.Parallel()
	origin := gittest.OriginWithBase(t, map[string]string{"docs/a b.md": "one\n", "docs/x.sh": "echo\n", "docs/same.md": "same\n"})
	seed := gittest.CloneOf(t, origin)
	gitT(t, seed, "update-index", "--chmod=+x", "docs/x.sh")
	gitT(t, seed, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
	gitT(t, seed, "push", "-q", "origin", "HEAD:main")
	r := newClone(t, origin)
	edit := func(p string, old []byte) ([]byte, bool, error) {
		if strings.HasSuffix(p, "same.md") {
			return old, false, nil
		}
		return bytes.ToUpper(old), true, nil
	}
	paths := []string{"docs/a b.md", "docs/x.sh", "docs/same.md"}
	res, err := r.CommitEdits(ctxT(t), "main", "", "edit", paths, edit)
	commit := res.Commit
	if err != nil || commit == "" {
		t.Fatalf("CommitEdits: %q %v", commit, err)
	}
	for p, want := range map[string]string{"docs/a b.md": "ONE\n", "docs/x.sh": "ECHO\n", "docs/same.md": "same\n"} {
		if got, _ := gittest.File(origin, "main", p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if mode := strings.Fields(gitT(t, origin, "ls-tree", "main", "--", "docs/x.sh")); len(mode) == 0 || mode[0] != "100755" {
		t.Errorf("docs/x.sh mode %v, want 100755", mode)
	}
	if changed := strings.Split(strings.TrimSpace(gitT(t, origin, "diff", "--name-only", commit+"^", commit)), "\n"); len(changed) != 2 {
		t.Errorf("changed %v, want two files", changed)
	}
}

// With the tip the caller last pushed given, a commit someone else put
// on the branch is never built on: a ForeignCommitError, nothing pushed.
// The caller's own edit, pushed before its record (a crash), is its own.
func TestCommitEditsNeverBuildsOnAForeignCommit(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	r, other := newClone(t, origin), newClone(t, origin)
	ctx := ctxT(t)
	before := originRef(t, origin, "refs/heads/main")
	res, err := r.CommitEdits(ctx, "main", before, "shout", []string{"README.md"}, upper)
	if err != nil || res.Commit == "" {
		t.Fatalf("CommitEdits: %+v %v", res, err)
	}
	// Pushed, then the record was lost: asked again with the old tip, it
	// is found as this clone's own.
	if again, err := r.CommitEdits(ctx, "main", before, "shout", []string{"README.md"}, upper); err != nil || again.Tip != res.Commit {
		t.Fatalf("again with the old tip: %+v %v, want its own commit %s", again, err, res.Commit)
	}
	foreign := commitOn(t, other.Dir, "main", "refs/remotes/origin/main", map[string]string{"other.txt": "theirs\n"})
	gitT(t, other.Dir, "push", "-q", "origin", "+main:main")
	_, err = r.CommitEdits(ctx, "main", res.Commit, "lower", []string{"README.md"}, func(_ string, old []byte) ([]byte, bool, error) {
		return bytes.ToLower(old), true, nil
	})
	fe, ok := IsForeignCommit(err)
	if !ok || fe.Found != foreign || fe.Expected != res.Commit {
		t.Fatalf("err %v, want a foreign commit %s", err, foreign)
	}
	if got := originRef(t, origin, "refs/heads/main"); got != foreign {
		t.Fatalf("origin main at %s, want the foreign commit left as it is", got)
	}
}
