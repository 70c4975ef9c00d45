package gitops

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if xe, ok := err.(*exec.ExitError); ok {
			stderr = string(xe.Stderr)
		}
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// newOrigin is a bare repository in a temp dir with one commit on main.
func newOrigin(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	origin := filepath.Join(root, "origin.git")
	gitT(t, root, "init", "-q", "--bare", "-b", "main", origin)
	seed := filepath.Join(root, "seed")
	gitT(t, root, "clone", "-q", origin, seed)
	configUser(t, seed)
	gitT(t, seed, "checkout", "-q", "-b", "main")
	writeFile(t, filepath.Join(seed, "README.md"), "hello\n")
	gitT(t, seed, "add", "-A")
	gitT(t, seed, "commit", "-q", "-m", "initial")
	gitT(t, seed, "push", "-q", "origin", "main")
	return origin
}

func configUser(t testing.TB, dir string) {
	t.Helper()
	gitT(t, dir, "config", "user.name", "Test")
	gitT(t, dir, "config", "user.email", "test@example.com")
}

// newClone clones origin and opens it.
func newClone(t testing.TB, origin string) *Repo {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "clone")
	gitT(t, filepath.Dir(dir), "clone", "-q", origin, dir)
	configUser(t, dir)
	r, err := Open(context.Background(), dir, Options{ScratchDir: t.TempDir()})
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

// commitOn makes a commit on branch (created from start when missing)
// writing files, without a checkout: a temporary index builds the tree.
func commitOn(t testing.TB, dir, branch, start string, files map[string]string) string {
	t.Helper()
	parent := start
	if out, err := exec.Command("git", "-C", dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output(); err == nil {
		parent = strings.TrimSpace(string(out))
	}
	index := filepath.Join(t.TempDir(), "index")
	run := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index, "LC_ALL=C")
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("", "read-tree", parent)
	for path, content := range files {
		blob := run(content, "hash-object", "-w", "--stdin")
		run("", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+path)
	}
	tree := run("", "write-tree")
	commit := run("commit on "+branch, "commit-tree", tree, "-p", parent)
	run("", "update-ref", "refs/heads/"+branch, commit)
	return commit
}

// originRef is the sha of ref in the bare origin ("" when absent).
func originRef(t testing.TB, origin, ref string) string {
	t.Helper()
	out, err := exec.Command("git", "--git-dir", origin, "rev-parse", "--verify", "--quiet", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// isAncestorIn asks the bare origin directly.
func isAncestorIn(t testing.TB, origin, a, d string) bool {
	t.Helper()
	return exec.Command("git", "--git-dir", origin, "merge-base", "--is-ancestor", a, d).Run() == nil
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

func ctxT(t testing.TB) context.Context {
	t.Helper()
	return t.Context()
}
