package gitops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// TestMain keeps the developer's git configuration (signing, hooks paths,
// default branch) out of every test repository.
func TestMain(m *testing.M) {
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Exit(m.Run())
}

// gitT runs git in dir for a test's setup or assertions and returns stdout.
func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gittest.Run(t, dir, args...)
}

// newOrigin is the origin most tests start from: main holds a README.
func newOrigin(t testing.TB) string {
	t.Helper()
	return gittest.OriginWithBase(t, nil)
}

// newClone clones origin and opens the clone.
func newClone(t testing.TB, origin string) *Repo {
	t.Helper()
	r, err := Open(context.Background(), gittest.CloneOf(t, origin), Options{ScratchDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// worktreePaths lists the registered worktrees of a clone.
func worktreePaths(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(gitT(t, dir, "worktree", "list", "--porcelain"), "\n") {
		if p, ok := strings.CutPrefix(l, "worktree "); ok {
			out = append(out, p)
		}
	}
	return out
}

// commitOn is gittest.CommitOn: a commit on branch without a checkout.
func commitOn(t testing.TB, dir, branch, start string, files map[string]string) string {
	t.Helper()
	return gittest.CommitOn(t, dir, branch, start, files)
}

// originRef is the sha of ref in the bare origin ("" when absent).
func originRef(t testing.TB, origin, ref string) string {
	t.Helper()
	return gittest.Ref(origin, ref)
}

// isAncestorIn asks the bare origin directly.
func isAncestorIn(t testing.TB, origin, a, d string) bool {
	t.Helper()
	return gittest.IsAncestor(origin, a, d)
}

func ctxT(t testing.TB) context.Context {
	t.Helper()
	return t.Context()
}

// workerClone makes dir a worker clone of r on branch (from start when r
// lacks it) with refs set there, and reports whether the branch existed.
func workerClone(t testing.TB, r *Repo, dir, branch, start string, refs map[string]string) bool {
	t.Helper()
	resumed, err := r.EnsureWorkerClone(ctxT(t), WorkerCheckout{Dir: dir, Branch: branch, Start: start, Refs: refs})
	if err != nil {
		t.Fatalf("worker clone %s on %s: %v", dir, branch, err)
	}
	return resumed
}
