package gittest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// EmptyOrigin is a bare repository with no commit yet whose HEAD names
// main: a project before its first push.
func EmptyOrigin(t testing.TB) string {
	t.Helper()
	origin := filepath.Join(t.TempDir(), "origin.git")
	Run(t, filepath.Dir(origin), "init", "-q", "--bare", "-b", "main", origin)
	return origin
}

// OriginWithBase is a bare origin whose main (the base every run starts
// from) holds one commit with files, path to content; nil files is a
// README only. The commit is made inside the bare repository, without a
// clone to push from.
func OriginWithBase(t testing.TB, files map[string]string) string {
	t.Helper()
	if files == nil {
		files = map[string]string{"README.md": "hello\n"}
	}
	origin := EmptyOrigin(t)
	CommitOn(t, origin, "main", "", files)
	return origin
}

// OriginWithWaveBranch is OriginWithBase with branch wave cut from main
// on the origin, as a run that opened the wave left it.
func OriginWithWaveBranch(t testing.TB, wave string, files map[string]string) string {
	t.Helper()
	origin := OriginWithBase(t, files)
	Run(t, origin, "branch", wave, "main")
	return origin
}

// CloneOf is a fresh clone of origin (a user's checkout) in a directory
// of its own, its identity the test one. A clone of an EmptyOrigin is on
// an unborn main; PushBase makes its first push.
func CloneOf(t testing.TB, origin string) string {
	t.Helper()
	return CloneInto(t, origin, filepath.Join(t.TempDir(), "repo"))
}

// CloneInto is CloneOf at dir (which must not exist yet), for a test that
// tells its clones apart by name.
func CloneInto(t testing.TB, origin, dir string) string {
	t.Helper()
	Run(t, filepath.Dir(dir), "clone", "-q", origin, dir)
	Run(t, dir, "config", "user.name", "t")
	Run(t, dir, "config", "user.email", "t@example.com")
	if command(dir, "rev-parse", "-q", "--verify", "HEAD").Run() != nil {
		Run(t, dir, "symbolic-ref", "HEAD", "refs/heads/main")
	}
	return dir
}

// PushBase commits everything in clone on main and pushes it as origin's
// main, the base (the first push of a project set up in the clone), and
// points origin/HEAD at it as a clone made afterwards would.
func PushBase(t testing.TB, clone, message string) {
	t.Helper()
	Run(t, clone, "add", "-A")
	Run(t, clone, "commit", "-q", "-m", message)
	Run(t, clone, "push", "-q", "origin", "main")
	Run(t, clone, "remote", "set-head", "origin", "main")
}

// CommitOn makes a commit on branch of the repository at dir (a clone or
// a bare origin) writing files over its tip, or over start when the
// branch does not exist yet ("" for a first commit), without a checkout:
// a temporary index builds the tree. It returns the commit.
func CommitOn(t testing.TB, dir, branch, start string, files map[string]string) string {
	t.Helper()
	parent := start
	if out, err := command(dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Output(); err == nil {
		parent = strings.TrimSpace(string(out))
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	if parent != "" {
		runWith(t, dir, index, "", "read-tree", parent)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		blob := runWith(t, dir, index, files[p], "hash-object", "-w", "--stdin")
		runWith(t, dir, index, "", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
	}
	tree := runWith(t, dir, index, "", "write-tree")
	args := []string{"commit-tree", tree, "-m", "commit on " + branch}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	commit := runWith(t, dir, index, "", args...)
	Run(t, dir, "update-ref", "refs/heads/"+branch, commit)
	return commit
}

// ForgedCommit makes, in the repository at dir, a commit no git writes
// but a hostile worker can with git mktree: on parent (a commit), its
// tree plus an entry name (".git", "..", ".") holding
// hooks/post-checkout, a script; parent "" makes it a root commit (an
// orphan, sharing no history) of that entry alone. No ref is changed.
func ForgedCommit(t testing.TB, dir, parent, name string) string {
	t.Helper()
	hook := runWith(t, dir, nil, "#!/bin/sh\ntouch forged-hook-ran\n", "hash-object", "-w", "--stdin")
	hooks := runWith(t, dir, nil, "100755 blob "+hook+"\tpost-checkout\n", "mktree")
	entry := runWith(t, dir, nil, "040000 tree "+hooks+"\thooks\n", "mktree")
	listing := ""
	if parent != "" {
		if l := Run(t, dir, "ls-tree", parent); l != "" {
			listing = l + "\n"
		}
	}
	tree := runWith(t, dir, nil, listing+"040000 tree "+entry+"\t"+name+"\n", "mktree")
	args := []string{"commit-tree", tree, "-m", "forged " + name}
	if parent != "" {
		args = append(args, "-p", parent)
	}
	return Run(t, dir, args...)
}

// Ref is the sha ref names in the repository at dir (a clone or a bare
// origin), "" when absent.
func Ref(dir, ref string) string {
	out, err := command(dir, "rev-parse", "--verify", "--quiet", ref).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// IsAncestor reports whether commit a is an ancestor of d in the
// repository at dir.
func IsAncestor(dir, a, d string) bool {
	return command(dir, "merge-base", "--is-ancestor", a, d).Run() == nil
}

// File is path's content at rev in the repository at dir (a bare origin,
// say), verbatim; false when rev or path is absent.
func File(dir, rev, path string) (string, bool) {
	out, err := command(dir, "show", rev+":"+path).Output()
	return string(out), err == nil
}
