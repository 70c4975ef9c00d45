package e2etest

import (
	"path/filepath"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/buildtest"
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
		// The release build (.ci/run makes the same one first, so in CI
		// the compile is a cache hit): TestStaticBuild and the version
		// tests check this binary instead of building their own.
		return buildtest.Binary(binPath)
	})
}

// Bin is the wave-orchestrator binary Run built; the runner and the local
// agent are that binary too, so the tests run it.
func Bin() string { return binPath }

// TmuxDir is the TMUX_TMPDIR every test's tmux servers live under.
func TmuxDir() string { return tmuxTmp }
