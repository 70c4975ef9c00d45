package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// inputKinds are the coordination kinds that wait for a person.
var inputKinds = []string{"human-feedback", "human-escalation", "clarification-request"}

// laneCode classifies a lane for --exit-code: a question waiting for a
// person wins, then a failed wave, then a wave still going; a lane whose
// waves that ran all completed is completed.
func laneCode(l state.Lane) int {
	ran, failed, going := 0, false, false
	for _, w := range l.Waves {
		for _, b := range w.Blockers {
			for _, k := range inputKinds {
				if b.Kind == k {
					return exitcode.StatusInputRequired
				}
			}
		}
		switch w.Status {
		case state.WavePending:
			continue
		case state.WaveFailed, state.WaveBlocked, state.WaveStopped:
			failed = true
		case state.WaveCompleted:
		default:
			going = true
		}
		ran++
	}
	switch {
	case failed:
		return exitcode.StatusFailed
	case going || ran == 0:
		return exitcode.StatusRunning
	}
	return exitcode.StatusCompleted
}

// laneFingerprint is what a change means for --wait-change: states,
// phases, attempts, markers, blockers and failures, not the clocks
// (heartbeat ages, generatedAt) that move on every read.
func laneFingerprint(l state.Lane) string {
	type agent struct {
		ID, State, StatusCode, LastMarker string
		Attempt                           int
		Exit                              *int
	}
	type wave struct {
		N             int
		Status, Phase string
		Attempt       int
		Closure       []state.Stage
		Agents        []agent
		Blockers      []state.Blocker
		Failures      []state.Failure
	}
	var ws []wave
	for _, w := range l.Waves {
		x := wave{N: w.Wave, Status: w.Status, Phase: w.Phase, Attempt: w.Attempt, Closure: w.Closure, Blockers: w.Blockers, Failures: w.Failures}
		for _, a := range w.Agents {
			x.Agents = append(x.Agents, agent{a.ID, a.State, a.StatusCode, a.LastMarker, a.Attempt, a.ExitCode})
		}
		ws = append(ws, x)
	}
	b, _ := json.Marshal(ws)
	return string(b)
}

// waitLaneChange blocks until the lane's fingerprint differs from the one
// it started with, watching the state directory tree with fsnotify (new
// directories are added as they appear). It returns the lane as last read
// and whether it changed; ctx's end is not an error. wait is handed the
// lane as it starts, once the watch is set: false returns that lane at
// once, unchanged.
func waitLaneChange(ctx context.Context, layout lanes.Layout, wait func(state.Lane) bool) (state.Lane, bool, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return state.Lane{}, false, fmt.Errorf("watch %s: %w", layout.StateDir, err)
	}
	defer w.Close()
	if err := jsonfile.MkdirAll(layout.StateDir); err != nil {
		return state.Lane{}, false, err
	}
	addTree(w, layout.StateDir)
	l, err := launcher.Status(ctx, layout)
	if err != nil {
		return l, false, err
	}
	start := laneFingerprint(l)
	if !wait(l) {
		return l, false, nil
	}
	// Writers touch several files per step: read once they pause.
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	for {
		select {
		case <-ctx.Done():
			return l, false, nil
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					addTree(w, ev.Name)
				}
			}
			if !strings.Contains(ev.Name, string(filepath.Separator)+".tmp") {
				debounce.Reset(50 * time.Millisecond)
			}
		case err := <-w.Errors:
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return l, false, fmt.Errorf("watch %s: %w", layout.StateDir, err)
			}
			debounce.Reset(0)
		case <-debounce.C:
			if l, err = launcher.Status(ctx, layout); err != nil {
				return l, false, err
			}
			if laneFingerprint(l) != start {
				return l, true, nil
			}
		}
	}
}

// addTree watches dir and every directory under it except temp dirs.
func addTree(w *fsnotify.Watcher, dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if d.Name() == ".tmp" || d.Name() == "dry-run" {
			return filepath.SkipDir
		}
		_ = w.Add(p)
		return nil
	})
}
