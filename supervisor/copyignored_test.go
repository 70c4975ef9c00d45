package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeMode(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// Copying the ignored files never reads or writes outside the
// repository and the checkout: a symlink in the repository pointing out
// is refused by name, one a worker left in its checkout is replaced,
// never written through; a symlink inside the repository is copied as
// the file it names; modes are kept, private ones private.
func TestCopyIgnoredNeverFollowsASymlinkOutOfTheRepositoryOrTheCheckout(t *testing.T) {
	repo, checkout, outside := t.TempDir(), t.TempDir(), t.TempDir()
	writeMode(t, filepath.Join(outside, "secret"), "the user's other secret\n", 0o600)
	writeMode(t, filepath.Join(outside, "profile"), "the user's shell profile\n", 0o644)
	writeMode(t, filepath.Join(repo, ".env"), "TOKEN=1\n", 0o600)
	if err := os.Mkdir(filepath.Join(repo, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeMode(t, filepath.Join(repo, "keys", "dev.pem"), "pem\n", 0o600)
	writeMode(t, filepath.Join(repo, "config", "real.yml"), "real\n", 0o640)
	if err := os.Symlink("real.yml", filepath.Join(repo, "config", "local.yml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(repo, "linked.env")); err != nil {
		t.Fatal(err)
	}
	// What a hostile worker left where the copy lands.
	if err := os.Symlink(filepath.Join(outside, "profile"), filepath.Join(checkout, ".env")); err != nil {
		t.Fatal(err)
	}

	err := checkCopyable(repo, []string{".env", "linked.env"})
	if err == nil || !strings.Contains(err.Error(), "linked.env is a symlink out of the repository") {
		t.Fatalf("checkCopyable: %v; want linked.env refused by name", err)
	}
	if err := copyIgnored(repo, checkout, []string{"linked.env"}); err == nil {
		t.Fatal("copied a file through a symlink out of the repository")
	}
	if _, err := os.Lstat(filepath.Join(checkout, "linked.env")); err == nil {
		t.Error("linked.env reached the checkout")
	}

	if err := copyIgnored(repo, checkout, []string{".env", "keys/dev.pem", "config/local.yml"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "profile")); string(b) != "the user's shell profile\n" {
		t.Errorf("the copy wrote through the worker's symlink: the file outside now holds %q", b)
	}
	for _, c := range []struct {
		rel, body string
		mode      os.FileMode
	}{{".env", "TOKEN=1\n", 0o600}, {"keys/dev.pem", "pem\n", 0o600}, {"config/local.yml", "real\n", 0o640}} {
		p := filepath.Join(checkout, c.rel)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("%s: %v", c.rel, err)
		}
		b, _ := os.ReadFile(p)
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != c.mode || string(b) != c.body {
			t.Errorf("%s: %v %q; want a regular file %v %q", c.rel, fi.Mode(), b, c.mode, c.body)
		}
	}
	if fi, err := os.Stat(filepath.Join(checkout, "keys")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("keys/ in the checkout: %v %v; want it private (0700) as in the repository", fi.Mode(), err)
	}
}
