package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// waitPending waits until the lane has questions waiting for a person —
// a wave agent's (blocking or not) or a backlog issue's — and returns
// them. One watch over the lane's state tree is set before the first look
// and kept to the end, so nothing asked after the command started falls
// between a look and a watch: the first look sees it, or the write that
// asks it wakes the next. It ends with ctx's error when ctx ends first.
func waitPending(ctx context.Context, layout lanes.Layout) ([]questions.Question, error) {
	if err := jsonfile.MkdirAll(layout.StateDir); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", layout.StateDir, err)
	}
	defer w.Close()
	addTree(w, layout.StateDir)
	// Writers touch several files per step: look once they pause. The
	// first look is at once.
	look := time.NewTimer(0)
	defer look.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					addTree(w, ev.Name) // files written before this are read by the look it schedules
				}
			}
			if !strings.Contains(ev.Name, string(filepath.Separator)+".tmp") {
				look.Reset(50 * time.Millisecond)
			}
		case err := <-w.Errors:
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return nil, fmt.Errorf("watch %s: %w", layout.StateDir, err)
			}
			look.Reset(0)
		case <-look.C:
			qs, _, err := questions.List(layout)
			if err != nil {
				return nil, err
			}
			if p := questions.PendingOf(qs); len(p) > 0 {
				return p, nil
			}
		}
	}
}
