// Package buildtest builds the wave-orchestrator binary for the tests that
// run it (the e2e packages, the supervisor's and the kubernetes backend's
// tests, the benchmarks). It builds it one way, the release build .ci/run
// makes first (CGO_ENABLED=0, -trimpath, -tags grpcnotrace; README,
// "Install"): Go's build cache keys each
// compile by those settings, so builds that differed in them compiled
// every package of the binary twice on a fresh machine (about 100 s of CPU
// each). It links it once for all of them: into one private directory per
// checkout, where go build leaves a binary that is up to date alone, and
// each test binary gets a hard link to it.
package buildtest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// ReleaseTags are the release build's tags. grpcnotrace leaves out gRPC's
// golang.org/x/net/trace debug pages (linked through the OTLP exporters,
// never used): their templates would keep every exported method of every
// type in the binary, 13 MB of it.
const ReleaseTags = "grpcnotrace"

// Binary builds the binary of the module the test runs in to dst. The
// link (seconds of CPU and a 50 MB write) is done once per change of the
// sources, not once per test package: the build goes to the checkout's
// shared directory under a lock, go build relinks only what is stale,
// and dst is a hard link to the result (a copy across file systems). A
// later build replaces the shared file by renaming over it, so a test
// still running the old one keeps its own.
func Binary(dst string) error {
	src, err := cmdDir()
	if err != nil {
		return err
	}
	dir, err := sharedDir(src)
	if err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", dir, err)
	}
	built := filepath.Join(dir, "wave-orchestrator")
	build := exec.Command("go", "build", "-trimpath", "-tags", ReleaseTags, "-buildvcs=auto", "-o", built, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", src, err, out)
	}
	if err := os.Link(built, dst); err == nil {
		return nil
	}
	return copyFile(built, dst)
}

// sharedDir is this user's directory for the binary built from src: one
// per checkout, made private to the user, and refused if someone else
// made it first.
func sharedDir(src string) (string, error) {
	sum := sha256.Sum256([]byte(src))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("wave-orchestrator-testbin-%d-%s", os.Getuid(), hex.EncodeToString(sum[:6])))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 || !ok || int(st.Uid) != os.Getuid() {
		return "", fmt.Errorf("%s is not a private directory of this user: remove it", dir)
	}
	return dir, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cmdDir is the binary's source directory in this module, found from the
// module the test runs in (go test runs a test in its package directory).
func cmdDir() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("go env GOMOD: not inside the module")
	}
	return filepath.Join(filepath.Dir(mod), "cmd", "wave-orchestrator"), nil
}
