// Package coalesce batches the calls of concurrent callers: while one
// batch runs, the calls made meanwhile wait, then run together in the
// next. No call waits for a batch to fill: one made while none runs goes
// at once. It lets callers share one costly step (a git push, a tmux
// call) among the requests that arrive while the last one runs.
package coalesce

import (
	"context"
	"sync"
)

// Queue coalesces calls. The caller whose call finds no batch running
// leads: it runs batches, with its own context, until none waits. Every
// caller returns once the batch holding its call ran. A Queue is ready
// once Run is set, and must not be copied after its first call.
type Queue[T, R any] struct {
	// Run does one batch; it returns one result per item, in order.
	Run func(ctx context.Context, batch []T) []R
	// Key, when set, keeps items with equal keys out of one batch: the
	// later one waits for the next batch.
	Key func(T) string

	mu      sync.Mutex
	waiting []*call[T, R]
	running bool
}

// call is one caller's item and, once its batch ran, its result.
type call[T, R any] struct {
	item T
	res  R
	done chan struct{}
}

// Do puts item in the next batch and returns its result.
func (q *Queue[T, R]) Do(ctx context.Context, item T) R {
	c := &call[T, R]{item: item, done: make(chan struct{})}
	q.mu.Lock()
	q.waiting = append(q.waiting, c)
	lead := !q.running
	q.running = true
	q.mu.Unlock()
	if lead {
		q.serve(ctx)
	}
	<-c.done
	return c.res
}

// Waiting is the number of calls waiting for a batch (not the ones in
// the batch that runs).
func (q *Queue[T, R]) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.waiting)
}

// serve runs batches until no call waits.
func (q *Queue[T, R]) serve(ctx context.Context) {
	for {
		q.mu.Lock()
		batch := q.take()
		if len(batch) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		items := make([]T, len(batch))
		for i, c := range batch {
			items[i] = c.item
		}
		res := q.Run(ctx, items)
		for i, c := range batch {
			if i < len(res) {
				c.res = res[i]
			}
			close(c.done)
		}
	}
}

// take removes the next batch from the waiting calls: all of them, or,
// with Key, the first of each key. Called with mu held.
func (q *Queue[T, R]) take() []*call[T, R] {
	if q.Key == nil {
		batch := q.waiting
		q.waiting = nil
		return batch
	}
	var batch, rest []*call[T, R]
	seen := map[string]bool{}
	for _, c := range q.waiting {
		k := q.Key(c.item)
		if seen[k] {
			rest = append(rest, c)
			continue
		}
		seen[k] = true
		batch = append(batch, c)
	}
	q.waiting = rest
	return batch
}
