// Package fanout runs independent pieces of work side by side, a bounded
// number at once: the end of a backlog run's clean-up, worktree removals,
// the observation of a lane's runs. It owns no state; the caller's f must be safe
// to call from several goroutines.
package fanout

import (
	"sync"
	"sync/atomic"
)

// Each calls f(0) … f(n-1) on at most width goroutines (at least one) and
// returns once every call has. The indexes are handed out in order, each
// once, to whichever goroutine is free.
func Each(n, width int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(max(width, 1), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}
