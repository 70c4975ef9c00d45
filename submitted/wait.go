package submitted

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// Wait returns run id's record once it is terminal. The records'
// directory is watched before the first read, so an end written in
// between is seen; nothing is polled. On ctx's end it returns the last
// record read with ctx's error.
func (q Queue) Wait(ctx context.Context, id string) (*Run, error) {
	if err := ValidRunID(id); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", q.st.dir, err)
	}
	defer w.Close()
	if err := w.Add(q.st.dir); err != nil {
		return nil, fmt.Errorf("watch %s: %w", q.st.dir, err)
	}
	want := filepath.Clean(q.st.path(id))
	for {
		r, err := q.st.read(id)
		if err != nil {
			return nil, err
		}
		if r.Terminal() {
			return r, nil
		}
		if err := nextChange(ctx, w, want); err != nil {
			return r, err
		}
	}
}

// nextChange returns once want changed (or events were lost, so it must
// be read again).
func nextChange(ctx context.Context, w *fsnotify.Watcher, want string) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-w.Events:
			if filepath.Clean(ev.Name) == want {
				return nil
			}
		case err := <-w.Errors:
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				return nil
			}
			return fmt.Errorf("watch %s: %w", filepath.Dir(want), err)
		}
	}
}
