// Package gittest runs git for test harnesses: scratch repositories and
// their bare origins, made and inspected the way a user's shell would,
// under a fixed test identity. It is the test-side half of gitops (the
// one place git runs); production code uses gitops.
package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// identity is the author and committer of every commit a test makes.
var identity = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
	"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com"}

// Run runs git in dir with args; a failure fails the test. The output is
// trimmed.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := command(dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git -C %s %v: %v\n%s", dir, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Init makes dir a fresh repository.
func Init(t testing.TB, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init %s: %v %s", dir, err, out)
	}
}

// HasPath reports whether rev holds path in the repository at gitDir (a
// bare origin, say).
func HasPath(gitDir, rev, path string) bool {
	return exec.Command("git", "--git-dir", gitDir, "cat-file", "-e", rev+":"+path).Run() == nil
}

func command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), identity...)
	return cmd
}
