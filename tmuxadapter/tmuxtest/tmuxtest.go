// Package tmuxtest isolates test binaries that start tmux servers: no
// inherited $TMUX, a private TMUX_TMPDIR short enough for socket paths, and
// a check when the tests end that every server they started is gone.
package tmuxtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Run is a TestMain body: it isolates tmux, runs setup (if non-nil; an
// error fails the run) and the tests, and fails the run if a tmux server
// is left behind, killing it.
func Run(m *testing.M, setup func(tmuxDir string) error) int {
	dir, err := isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if setup != nil {
		if err := setup(dir); err != nil {
			fmt.Fprintln(os.Stderr, "test setup:", err)
			return 1
		}
	}
	code := m.Run()
	if left := tmuxadapter.KillServers(context.Background(), dir); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "tmux servers left running:", left)
		code = 1
	}
	return code
}

// isolate unsets TMUX/TMUX_PANE and points TMUX_TMPDIR at a fresh short
// directory, which it returns.
func isolate() (string, error) {
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	dir, err := os.MkdirTemp("/tmp", "wt")
	if err != nil {
		return "", err
	}
	os.Setenv("TMUX_TMPDIR", dir)
	return dir, nil
}

// Live returns the sockets under dir whose server still has sessions.
func Live(dir string) []string { return tmuxadapter.LiveServers(context.Background(), dir) }
