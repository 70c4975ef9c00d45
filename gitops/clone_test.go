package gitops

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// credentialsDir writes a basic-auth Secret's files as kubernetes mounts
// them.
func credentialsDir(t *testing.T, user, pass string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "username"), user)
	writeFile(t, filepath.Join(dir, "password"), pass)
	return dir
}

func TestAPodClonesAndPushesOverHTTPWithOnlyTheMountedCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	origin := newOrigin(t)
	url := gittest.ServeHTTP(t, origin, "worker", "s3cret pass")
	env, err := CredentialEnv(credentialsDir(t, "worker", "s3cret pass"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "clone")
	r, err := Clone(ctx, url, dir, CloneOptions{Options: Options{Env: env}, Branch: "main", Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitT(t, dir, "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Errorf("shallow clone: is-shallow %s", got)
	}
	writeFile(t, filepath.Join(dir, "work.txt"), "done\n")
	if err := CommitAll(ctx, dir, "work"); err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "HEAD", "wave/i1"); err != nil {
		t.Fatal(err)
	}
	if !gittest.HasPath(origin, "refs/heads/wave/i1", "work.txt") {
		t.Fatal("origin lacks the pushed branch's file")
	}
	// Cloning the same dir again opens what is there.
	if _, err := Clone(ctx, url, dir, CloneOptions{Options: Options{Env: env}, Branch: "main"}); err != nil {
		t.Fatalf("second clone into the same dir: %v", err)
	}
}

func TestACloneWithWrongCredentialsFailsWithoutShowingThem(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	url := gittest.ServeHTTP(t, origin, "worker", "right")
	env, err := CredentialEnv(credentialsDir(t, "worker", "wrong-pass-xyz"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Clone(context.Background(), url, filepath.Join(t.TempDir(), "c"), CloneOptions{Options: Options{Env: env}, Branch: "main"})
	if err == nil {
		t.Fatal("clone with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), "wrong-pass-xyz") {
		t.Fatalf("error shows the password: %v", err)
	}
}

func TestServeHTTPWithoutAUserNeedsNoCredentials(t *testing.T) {
	t.Parallel()
	origin := newOrigin(t)
	url := gittest.ServeHTTP(t, origin, "", "")
	dir := filepath.Join(t.TempDir(), "c")
	if _, err := Clone(context.Background(), url, dir, CloneOptions{Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
}
