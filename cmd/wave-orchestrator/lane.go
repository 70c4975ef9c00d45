package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// laneEnv is a resolved lane: config, the merged lane view and its layout.
type laneEnv struct {
	cfg    *config.Config
	lane   *config.Lane
	layout lanes.Layout
}

// openLane loads config and resolves the lane named by --lane.
func openLane(g *globals) (*laneEnv, error) {
	root, err := g.root()
	if err != nil {
		return nil, err
	}
	if !g.envWarned {
		g.envWarned = true
		for _, w := range config.UnknownEnv(os.Environ()) {
			fmt.Fprintln(os.Stderr, "wave-orchestrator: warning:", w)
		}
	}
	cfg, err := config.Load(root, os.LookupEnv, configFlags(g.flags)...)
	if err != nil {
		var ce *config.Error
		if errors.As(err, &ce) && ce.Flag != "" {
			return nil, usageError{err} // a bad flag value
		}
		return nil, err
	}
	lane, err := cfg.Lane(root, g.lane)
	if err != nil {
		return nil, err
	}
	if err := lanes.ValidateLane(lane.Name); err != nil {
		return nil, usageError{err}
	}
	project := lane.Project
	if project == "" {
		project = cfg.ProjectName
	}
	// A state root an older version made 0755 is closed to other users:
	// agent logs, prompts and records beneath it are the user's alone.
	// Only one inside the repository, never the repository itself.
	stateRoot := filepath.Join(root, lane.StateRoot)
	if rel, err := filepath.Rel(root, stateRoot); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		if err := jsonfile.Tighten(stateRoot); err != nil {
			return nil, fmt.Errorf("state root %s: %w", stateRoot, err)
		}
	}
	return &laneEnv{cfg: cfg, lane: lane, layout: lanes.New(root, lane.StateRoot, project, lane.Name)}, nil
}

// waveOptions are the parse options for this lane.
func (e *laneEnv) waveOptions() wave.Options {
	root := e.lane.RepoRoot
	return wave.Options{
		Roles:                   wave.Roles(e.lane.Roles),
		BenchmarkCatalogPath:    e.lane.BenchmarkCatalogPath,
		Context7BundleIndexPath: e.lane.Context7BundleIndexPath,
		ReadFile: func(rel string) ([]byte, error) {
			return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		},
	}
}

// loadWaves parses and validates every wave of the lane; one invalid wave
// blocks all (as in the reference), with every problem listed.
func (e *laneEnv) loadWaves() ([]*wave.Wave, error) {
	opts := e.waveOptions()
	if _, err := os.Stat(filepath.Join(e.lane.RepoRoot, e.lane.WavesDir)); errors.Is(err, fs.ErrNotExist) {
		return nil, e.noWavesDir()
	}
	ws, err := wave.LoadDir(e.lane.RepoRoot, e.lane.WavesDir, opts)
	if err != nil {
		return nil, err
	}
	if err := wave.Validate(ws, e.lane, opts); err != nil {
		return nil, err
	}
	return ws, nil
}

// self is the absolute path of this binary (the runner and local agent).
func self() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate wave-orchestrator binary: %w", err)
	}
	return filepath.EvalSymlinks(p)
}

// noWavesDir explains a lane whose waves directory is missing: an
// unknown lane is a usage error that says how lanes are declared.
func (e *laneEnv) noWavesDir() error {
	name := e.lane.Name
	_, declared := e.cfg.Lanes[name]
	if declared || name == e.cfg.DefaultLane {
		return fmt.Errorf("lane %s: waves directory %s does not exist (create it, run `wave-orchestrator init`, or set paths.wavesDir)", name, e.lane.WavesDir)
	}
	known := []string{e.cfg.DefaultLane}
	for n := range e.cfg.Lanes {
		if n != e.cfg.DefaultLane {
			known = append(known, n)
		}
	}
	slices.Sort(known[1:])
	return usageError{fmt.Errorf("unknown lane %q (known lanes: %s); declare it under `lanes: {%s: {}}` in wave.config.yaml, or create its waves directory %s",
		name, strings.Join(known, ", "), name, e.lane.WavesDir)}
}
