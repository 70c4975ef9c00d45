package fanout

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestEachCallsEveryIndexOnceAndNeverMoreThanWidthAtOnce(t *testing.T) {
	for _, tc := range []struct{ n, width int }{{0, 3}, {1, 3}, {10, 1}, {10, 3}, {100, 8}, {5, 0}, {3, 50}} {
		var mu sync.Mutex
		seen := make([]int, tc.n)
		var running, most atomic.Int64
		release := make(chan struct{})
		close(release)
		Each(tc.n, tc.width, func(i int) {
			now := running.Add(1)
			for {
				m := most.Load()
				if now <= m || most.CompareAndSwap(m, now) {
					break
				}
			}
			<-release
			mu.Lock()
			seen[i]++
			mu.Unlock()
			running.Add(-1)
		})
		for i, c := range seen {
			if c != 1 {
				t.Errorf("n=%d width=%d: index %d called %d times", tc.n, tc.width, i, c)
			}
		}
		if limit := int64(max(tc.width, 1)); most.Load() > limit {
			t.Errorf("n=%d width=%d: %d calls at once", tc.n, tc.width, most.Load())
		}
	}
}
