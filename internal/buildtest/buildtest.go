// Package buildtest builds the wave-orchestrator binary for the tests that
// run it (the e2e packages, the supervisor's and the kubernetes backend's
// tests, the benchmarks). It builds it one way, the release build .ci/run
// makes first (CGO_ENABLED=0, -trimpath, -tags grpcnotrace; README,
// "Install"): Go's build cache keys each
// compile by those settings, so builds that differed in them compiled
// every package of the binary twice on a fresh machine (about 100 s of CPU
// each).
package buildtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ReleaseTags are the release build's tags. grpcnotrace leaves out gRPC's
// golang.org/x/net/trace debug pages (linked through the OTLP exporters,
// never used): their templates would keep every exported method of every
// type in the binary, 13 MB of it.
const ReleaseTags = "grpcnotrace"

// Binary builds the binary of the module the test runs in to dst.
func Binary(dst string) error {
	src, err := cmdDir()
	if err != nil {
		return err
	}
	build := exec.Command("go", "build", "-trimpath", "-tags", ReleaseTags, "-buildvcs=auto", "-o", dst, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", src, err, out)
	}
	return nil
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
