package dashboard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch calls onChange, debounced by debounce, after any change under the
// lane state dir that a view shows: events.jsonl and the lock in the
// state dir, coordination logs in wave dirs, runtime/status records and
// logs in run dirs. Wave and run directories are added as they appear; an
// event queue overflow resyncs the watch set and reports a change. A
// state dir that does not exist yet is waited for through its nearest
// existing ancestor. Watch returns when ctx is done.
func Watch(ctx context.Context, stateDir string, debounce time.Duration, onChange func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", stateDir, err)
	}
	defer w.Close()
	watched := map[string]bool{}
	// sync makes the watch set match watchDirs: new wave and run dirs
	// are added, a recreated state dir is re-added, and the ancestor
	// watched while the state dir was missing is dropped.
	sync := func() {
		want := map[string]bool{}
		// A directory created between listing its parent and watching it
		// sends no event to anyone: list again until nothing new appears.
		for added := true; added; {
			added = false
			for _, d := range watchDirs(stateDir) {
				want[d] = true
				if watched[d] {
					continue
				}
				// A directory removed between listing and adding is fine.
				if err := w.Add(d); err == nil {
					watched[d] = true
					added = true
				}
			}
		}
		for d := range watched {
			if !want[d] {
				_ = w.Remove(d)
				delete(watched, d)
			}
		}
	}
	sync()
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				delete(watched, ev.Name)
			}
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				sync()
			}
			if fire == nil {
				fire = time.After(debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return fmt.Errorf("watch %s: %w", stateDir, err)
			}
			sync()
			if fire == nil {
				fire = time.After(debounce)
			}
		case <-fire:
			fire = nil
			onChange()
		}
	}
}

// watchDirs lists the directories to watch: the state dir, waves/,
// waves/<n>/, waves/<n>/runs/ and every run dir, and the same for
// backlog runs (backlog/, backlog/<run-id>/, its runs/ and their run
// dirs); or, while the state dir is missing, its nearest existing
// ancestor.
func watchDirs(stateDir string) []string {
	if _, err := os.Stat(stateDir); err != nil {
		d := stateDir
		for {
			parent := filepath.Dir(d)
			if parent == d {
				return nil
			}
			d = parent
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				return []string{d}
			}
		}
	}
	dirs := []string{stateDir}
	for _, group := range []string{"waves", "backlog"} {
		dirs = append(dirs, runGroupDirs(filepath.Join(stateDir, group))...)
	}
	return dirs
}

// runGroupDirs is root (waves/ or backlog/), each directory in it (a
// wave, a backlog run), its runs/ and every run dir there.
func runGroupDirs(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	dirs := []string{root}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		d := filepath.Join(root, e.Name())
		dirs = append(dirs, d)
		runs := filepath.Join(d, "runs")
		rs, err := os.ReadDir(runs)
		if err != nil {
			continue
		}
		dirs = append(dirs, runs)
		for _, r := range rs {
			if r.IsDir() {
				dirs = append(dirs, filepath.Join(runs, r.Name()))
			}
		}
	}
	return dirs
}
