package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkLaunch50 is the wall time to start 50 trivial runs in one batch
// and see all of them terminal.
func BenchmarkLaunch50(b *testing.B) {
	h := newHarness(b)
	for i := 0; b.Loop(); i++ {
		root := filepath.Join(b.TempDir(), fmt.Sprint(i))
		var ps []*Payload
		for j := range 50 {
			p := h.payload(b, root, fmt.Sprintf("A%d", j), "exit", "0")
			p.SessionName = fmt.Sprintf("b%d-A%d", i, j)
			ps = append(ps, p)
		}
		h.start(b, ps...)
		for _, p := range ps {
			h.waitDone(b, p.RunDir)
		}
		b.StopTimer()
		h.tm.KillServer(context.Background())
		b.StartTimer()
	}
}

// BenchmarkExitToWatcherEvent measures the latency from the runner's
// FinishedAt to the watcher delivering the final change, over 200 runs.
func BenchmarkExitToWatcherEvent(b *testing.B) {
	h := newHarness(b)
	for i := 0; b.Loop(); i++ {
		ctx, cancel := context.WithCancel(context.Background())
		w := NewWatcher(slogDiscard(), WithBackend(h.b))
		go w.Run(ctx)
		root := filepath.Join(b.TempDir(), fmt.Sprint(i))
		var lat []time.Duration
		for batch := range 4 {
			var ps []*Payload
			for j := range 50 {
				p := h.payload(b, root, fmt.Sprintf("A%d-%d", batch, j), "exit", "0")
				p.SessionName = fmt.Sprintf("e%d-%d-%d", i, batch, j)
				ps = append(ps, p)
			}
			h.start(b, ps...)
			for _, p := range ps {
				w.Add(p.RunDir)
			}
			seen := 0
			for c := range w.Changes() {
				if !c.Obs.Verdict.Done {
					continue
				}
				if r := c.Obs.Record; r != nil && r.FinishedAt != nil {
					lat = append(lat, time.Since(*r.FinishedAt))
				}
				if seen++; seen == len(ps) {
					break
				}
			}
		}
		cancel()
		slices.Sort(lat)
		if len(lat) > 0 {
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		}
		h.tm.KillServer(context.Background())
	}
}
