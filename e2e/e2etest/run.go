package e2etest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter/tmuxtest"
)

// Run is an end-to-end package's TestMain body: it isolates tmux
// (tmuxtest.Run), builds the binary once for the test process and runs
// the tests. A package with more to tear down (a shared cluster) defers
// that around Run.
func Run(m *testing.M) int {
	return tmuxtest.Run(m, func(dir string) error {
		tmuxTmp = dir
		binPath = filepath.Join(dir, "wave-orchestrator")
		src, err := cmdDir()
		if err != nil {
			return err
		}
		// The release build (.ci/run makes the same one first, so in CI
		// the compile is a cache hit): TestStaticBuild and the version
		// tests check this binary instead of building their own.
		build := exec.Command("go", "build", "-trimpath", "-buildvcs=auto", "-o", binPath, ".")
		build.Dir = src
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %v\n%s", src, err, out)
		}
		return nil
	})
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

// Bin is the wave-orchestrator binary Run built; the runner and the local
// agent are that binary too, so the tests run it.
func Bin() string { return binPath }

// TmuxDir is the TMUX_TMPDIR every test's tmux servers live under.
func TmuxDir() string { return tmuxTmp }
