package tmuxadapter

import (
	"context"
	"path/filepath"
)

// LiveServers returns the socket names under tmpDir (a TMUX_TMPDIR) whose
// server still has sessions. It finds what a crashed test or launcher left
// behind without knowing the socket names.
func LiveServers(ctx context.Context, tmpDir string) []string {
	socks, _ := filepath.Glob(filepath.Join(tmpDir, "tmux-*", "*"))
	var live []string
	for _, s := range socks {
		name := filepath.Base(s)
		if ss, err := New(name, WithEnv("TMUX_TMPDIR="+tmpDir)).ListSessions(ctx); err == nil && len(ss) > 0 {
			live = append(live, name)
		}
	}
	return live
}

// KillServers kills every live server under tmpDir and returns their
// socket names.
func KillServers(ctx context.Context, tmpDir string) []string {
	live := LiveServers(ctx, tmpDir)
	for _, name := range live {
		_ = New(name, WithEnv("TMUX_TMPDIR="+tmpDir)).KillServer(ctx)
	}
	return live
}
