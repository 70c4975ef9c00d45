// Package tmuxtest isolates test binaries that start tmux servers: no
// inherited $TMUX, a private TMUX_TMPDIR short enough for socket paths, and
// a check when the tests end that every server they started is gone.
package tmuxtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Run is a TestMain body: it isolates tmux, runs the tests (and setup, if
// non-nil, first; a setup error fails the run), and fails the run if a
// tmux server is left behind, killing it.
func Run(m *testing.M, setup func(tmuxDir string) error) int {
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	dir, err := os.MkdirTemp("/tmp", "wt")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("TMUX_TMPDIR", dir)
	if setup != nil {
		if err := setup(dir); err != nil {
			fmt.Fprintln(os.Stderr, "test setup:", err)
			return 1
		}
	}
	code := m.Run()
	if left := KillLive(dir); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "tmux servers left running:", left)
		code = 1
	}
	return code
}

// Live returns the socket names of servers still answering under the
// TMUX_TMPDIR dir.
func Live(dir string) []string {
	socks, _ := filepath.Glob(filepath.Join(dir, "tmux-*", "*"))
	var live []string
	for _, s := range socks {
		if exec.Command("tmux", "-S", s, "list-sessions").Run() == nil {
			live = append(live, s)
		}
	}
	return live
}

// KillLive kills every server still answering under dir and returns their
// socket names.
func KillLive(dir string) []string {
	var names []string
	for _, s := range Live(dir) {
		exec.Command("tmux", "-S", s, "kill-server").Run()
		names = append(names, filepath.Base(s))
	}
	return names
}
