// Package gittest runs git for test harnesses: scratch repositories and
// their bare origins, made and inspected the way a user's shell would,
// under a fixed test identity. Its builders are named for the situation a
// test starts from (OriginWithBase, CloneOf, OriginWithWaveBranch, …). It
// is the test-side half of gitops (the one place git runs) and is
// imported only by tests and e2e/e2etest; production code uses
// gitops. It does not import gitops, so gitops's own tests can use it.
package gittest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// env is what every git a test runs adds to the environment: the test
// identity as author and committer, output in English (tests read it)
// and no prompt for credentials (a test would hang on it).
var env = []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
	"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
	"LC_ALL=C", "GIT_TERMINAL_PROMPT=0"}

// Run runs git in dir with args; a failure fails the test, naming
// stderr. It returns stdout, trimmed, so progress and hints git prints on
// stderr never reach what a test compares.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return runWith(t, dir, nil, "", args...)
}

// runWith is Run with extra environment and stdin.
func runWith(t testing.TB, dir string, extra []string, stdin string, args ...string) string {
	t.Helper()
	cmd := command(dir, args...)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git -C %s %v: %v\n%s", dir, args, err, stderr.Bytes())
	}
	return strings.TrimSpace(string(out))
}

// Try runs git in dir with args as Run does, for a test that expects it
// to fail: the error, with stderr in it.
func Try(dir string, args ...string) error {
	cmd := command(dir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git %v: %w: %s", args, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
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
	cmd.Env = append(os.Environ(), env...)
	return cmd
}
