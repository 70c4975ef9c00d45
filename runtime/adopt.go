package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Adopt classifies every run under runsRoot (run directories are found at
// any depth by their launch.json or runtime.json), so a restarted launcher
// continues live runs instead of launching duplicates. With a tmux backend
// it lists the tagged sessions in one call and warns about live runners
// whose session is gone.
func Adopt(ctx context.Context, b Backend, runsRoot string) ([]Observation, error) {
	var dirs []string
	err := filepath.WalkDir(runsRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == runsRoot {
				return fs.SkipAll
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		for _, f := range []string{launchFile, runtimeFile} {
			if _, err := os.Stat(filepath.Join(path, f)); err == nil {
				dirs = append(dirs, path)
				return fs.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("adopt runs under %s: %w", runsRoot, err)
	}
	slices.Sort(dirs)
	var sessions map[string]bool
	if tb, ok := b.(*TmuxBackend); ok {
		ss, err := tb.tm.ListSessions(ctx)
		if err == nil {
			sessions = map[string]bool{}
			for _, s := range ss {
				sessions[s.Name] = true
			}
		}
	}
	now := time.Now()
	out := make([]Observation, 0, len(dirs))
	for _, d := range dirs {
		obs, _ := b.Observe(ctx, d, now)
		if rec := obs.Record; sessions != nil && rec != nil && obs.Verdict.State == StateRunning && !sessions[rec.SessionName] {
			obs.Verdict.Warnings = append(obs.Verdict.Warnings, fmt.Sprintf("tmux session %s is gone but the runner is alive", rec.SessionName))
		}
		out = append(out, obs)
	}
	return out, nil
}
