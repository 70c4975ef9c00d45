package kube

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// BenchmarkJobs50 starts 50 runs at once against the local API server
// and its node and reports, per run, the time from the Start call to the
// launcher's record saying running (create-to-running), from the runner's
// end (its recorded finish) to the launcher's terminal record
// (end-to-record), and the launcher's API requests.
func BenchmarkJobs50(b *testing.B) {
	const runs = 50
	var requests atomic.Int64
	e := newEnvCounting(b, &requests)
	var toRunning, toRecord []time.Duration
	var perRun []float64
	for i := 0; b.Loop(); i++ {
		var mu sync.Mutex
		started := map[string]time.Time{}
		running := map[string]time.Duration{}
		final := map[string]time.Duration{}
		e.b.wrote = func(name string, rec runtime.Record) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if _, seen := running[name]; !seen && rec.TerminalDisposition == runtime.Running {
				running[name] = now.Sub(started[name])
			}
			if _, seen := final[name]; !seen && isFinal(rec.TerminalDisposition) && rec.FinishedAt != nil {
				final[name] = now.Sub(*rec.FinishedAt)
			}
		}
		var ps []*runtime.Payload
		for k := range runs {
			ps = append(ps, e.payload(fmt.Sprintf("w%d-A%d-a1", i, k), "sleep 1"))
		}
		before := requests.Load()
		t0 := time.Now()
		mu.Lock()
		for _, p := range ps {
			started[ObjectName(e.opts.instance(), p.RunID)] = t0
		}
		mu.Unlock()
		if err := e.b.Start(context.Background(), ps); err != nil {
			b.Fatal(err)
		}
		for _, p := range ps {
			if obs := e.await(e.b, p.RunDir, "run done", 2*time.Minute, done); obs.Verdict.State != runtime.StateCompleted {
				b.Fatalf("run %s: %+v", p.RunID, obs.Verdict)
			}
		}
		// Observe is the benchmark's own polling here; count only what
		// the backend needs: creates, deletes and its watches.
		mu.Lock()
		for _, d := range running {
			toRunning = append(toRunning, d)
		}
		for _, d := range final {
			toRecord = append(toRecord, d)
		}
		mu.Unlock()
		perRun = append(perRun, float64(requests.Load()-before)/runs)
	}
	b.ReportMetric(pct(toRunning, 50), "create-to-running-p50-ms")
	b.ReportMetric(pct(toRunning, 95), "create-to-running-p95-ms")
	b.ReportMetric(pct(toRecord, 50), "end-to-record-p50-ms")
	b.ReportMetric(pct(toRecord, 95), "end-to-record-p95-ms")
	b.ReportMetric(slices.Max(perRun), "launcher-requests/run")
}

func pct(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return float64(ds[(len(ds)-1)*p/100].Microseconds()) / 1000
}
