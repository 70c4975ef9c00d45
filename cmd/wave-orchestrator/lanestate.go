package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// loadLaneState opens the lane of the global flags and loads its wave
// state through launcher.Status.
func loadLaneState(ctx context.Context, g *globals) (state.Lane, *laneEnv, error) {
	e, err := openLane(g)
	if err != nil {
		return state.Lane{}, nil, err
	}
	l, err := launcher.Status(ctx, e.layout)
	return l, e, err
}

// openWaveRepo opens the lane as openLane does, and refuses a directory
// that is no wave-orchestrator repository at all — no config, no waves
// directory, no backlog and no state — where status, questions and usage
// would report an empty lane as if all were well.
func openWaveRepo(g *globals) (*laneEnv, error) {
	e, err := openLane(g)
	if err != nil {
		return nil, err
	}
	root := e.lane.RepoRoot
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
		return err == nil
	}
	if e.cfg.File != "" || exists(e.lane.WavesDir) || exists(e.lane.StateRoot) || backlogInUse(e) {
		return e, e.knownLane()
	}
	return nil, fmt.Errorf("%s is no wave-orchestrator repository (no wave.config.yaml, no %s, no %s): `wave-orchestrator init` starts one here, or give the repository with --repo-root or $WAVE_REPO_ROOT",
		root, e.lane.WavesDir, e.lane.StateRoot)
}

// knownLane refuses a lane the repository has nothing of — not its
// default lane, no lanes.<name> section, no waves directory, no state —
// a mistyped --lane, which status would show as an empty lane: the usage
// error launch gives, naming the known lanes and how to declare one.
func (e *laneEnv) knownLane() error {
	if _, err := os.Stat(filepath.Join(e.lane.RepoRoot, filepath.FromSlash(e.lane.WavesDir))); err == nil {
		return nil
	}
	if _, err := os.Stat(e.layout.StateDir); err == nil {
		return nil
	}
	if err := e.noWavesDir(); isUsageError(err) {
		return err
	}
	return nil // a declared lane with nothing yet: an empty lane
}

// knownWave refuses wave n (-1: none asked) when it is neither a wave
// file of the lane nor a wave the lane's state holds: a usage error that
// lists the lane's waves, as launch's is.
func (e *laneEnv) knownWave(l state.Lane, n int) error {
	if n < 0 {
		return nil
	}
	have := e.waveNumbers()
	for _, w := range l.Waves {
		have = append(have, w.Wave)
	}
	slices.Sort(have)
	have = slices.Compact(have)
	if slices.Contains(have, n) {
		return nil
	}
	return usageError{fmt.Errorf("lane %s: %w", e.lane.Name, &launcher.SelectionError{Start: n, End: n, Have: have})}
}

// waveNumbers are the numbers of the lane's wave files, by name (none
// is parsed).
func (e *laneEnv) waveNumbers() []int {
	entries, _ := os.ReadDir(filepath.Join(e.lane.RepoRoot, e.lane.WavesDir))
	var out []int
	for _, en := range entries {
		if n, err := wave.Number(en.Name()); err == nil {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
