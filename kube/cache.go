package kube

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// watched keeps the objects of a resource that match a label selector,
// as the API server last said them: it lists them, then watches from
// the list's resourceVersion, and lists again when the server says that
// version is gone (410). Each change is handed to onEvent after the
// cache holds it.
type watched[T any] struct {
	r       listable[T]
	sel     string
	index   func(*T) string // the key byIndex finds an object by ("" for none)
	onEvent func(o *T, deleted bool)
	logger  *slog.Logger

	mu      sync.RWMutex
	items   map[string]*T // by namespace/name
	synced  chan struct{} // closed after the first list
	didSync bool
}

func newWatched[T any](r listable[T], sel string, index func(*T) string, onEvent func(*T, bool), logger *slog.Logger) *watched[T] {
	if onEvent == nil {
		onEvent = func(*T, bool) {}
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &watched[T]{r: r, sel: sel, index: index, onEvent: onEvent, logger: logger,
		items: map[string]*T{}, synced: make(chan struct{})}
}

// get is the object ns/name as last seen.
func (w *watched[T]) get(ns, name string) (*T, bool) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	o, ok := w.items[ns+"/"+name]
	return o, ok
}

// byIndex are the objects whose index key is k.
func (w *watched[T]) byIndex(k string) []*T {
	w.mu.RLock()
	defer w.mu.RUnlock()
	var out []*T
	for _, o := range w.items {
		if w.index != nil && w.index(o) == k {
			out = append(out, o)
		}
	}
	return out
}

// waitSynced reports whether the first list arrived before ctx ended.
func (w *watched[T]) waitSynced(ctx context.Context) bool {
	select {
	case <-w.synced:
		return true
	case <-ctx.Done():
		return false
	}
}

// run lists and watches until ctx ends.
func (w *watched[T]) run(ctx context.Context) {
	b := backoff{min: 200 * time.Millisecond, max: 5 * time.Second}
	for ctx.Err() == nil {
		rv, err := w.relist(ctx)
		if err != nil {
			w.logger.Debug("kube_list", "resource", w.r.name, "err", err)
			b.wait(ctx)
			continue
		}
		b.reset()
		for ctx.Err() == nil {
			start := time.Now()
			next, got, err := w.watchFrom(ctx, rv)
			rv = next
			if isGone(err) {
				break // the version is compacted away: list again
			}
			if err != nil && ctx.Err() == nil {
				w.logger.Debug("kube_watch", "resource", w.r.name, "err", err)
			}
			if err != nil || (!got && time.Since(start) < time.Second) {
				b.wait(ctx)
			} else {
				b.reset()
			}
		}
	}
}

// relist replaces the cache with a fresh list: what is listed is added
// or updated, what is not is deleted.
func (w *watched[T]) relist(ctx context.Context) (string, error) {
	l, err := w.r.list(ctx, listOptions{LabelSelector: w.sel})
	if err != nil {
		return "", err
	}
	fresh := make(map[string]*T, len(l.Items))
	for i := range l.Items {
		fresh[key(metaOf(&l.Items[i]))] = &l.Items[i]
	}
	w.mu.Lock()
	old := w.items
	w.items = fresh
	if !w.didSync {
		w.didSync = true
		close(w.synced)
	}
	w.mu.Unlock()
	for k, o := range old {
		if _, ok := fresh[k]; !ok {
			w.onEvent(o, true)
		}
	}
	for _, o := range fresh {
		w.onEvent(o, false)
	}
	return l.Metadata.ResourceVersion, nil
}

// watchFrom watches from rv until the watch ends; it returns the
// resourceVersion reached and whether any event came.
func (w *watched[T]) watchFrom(ctx context.Context, rv string) (string, bool, error) {
	secs := int64(300 + rand.IntN(300))
	s, err := w.r.watch(ctx, listOptions{LabelSelector: w.sel, ResourceVersion: rv,
		AllowWatchBookmarks: true, TimeoutSeconds: &secs})
	if err != nil {
		return rv, false, err
	}
	defer s.close()
	got := false
	for {
		ev, err := s.next()
		if errors.Is(err, io.EOF) || (errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil) {
			// The server ended the watch, or the client's request
			// timeout did: watch again from where it got.
			return rv, got, nil
		}
		if err != nil {
			return rv, got, err
		}
		got = true
		m := metaOf(ev.Object)
		if v := m.ResourceVersion; v != "" {
			rv = v
		}
		switch ev.Type {
		case eventAdded, eventModified:
			w.mu.Lock()
			w.items[key(m)] = ev.Object
			w.mu.Unlock()
			w.onEvent(ev.Object, false)
		case eventDeleted:
			w.mu.Lock()
			delete(w.items, key(m))
			w.mu.Unlock()
			w.onEvent(ev.Object, true)
		}
	}
}

// backoff is a growing wait between failed attempts, with jitter.
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) reset() { b.cur = 0 }

func (b *backoff) wait(ctx context.Context) {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	d := b.cur/2 + rand.N(b.cur/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
