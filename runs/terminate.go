package runs

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// TerminateAll terminates the lane's runs whose records are given, all at
// once (each gets one grace period, not one after another), each on the
// backend its record names, whatever the lane says now: the loop that
// started them may be dead, so a kubernetes run is stopped through the
// cluster, which also records its outcome. errs[i] is recs[i]'s.
func TerminateAll(ctx context.Context, lane *config.Lane, layout lanes.Layout, recs []*runtime.Record, grace time.Duration) []error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opened := map[string]*Runs{}
	failed := map[string]error{}
	for _, rec := range recs {
		b := backendOf(rec)
		if _, ok := opened[b]; ok || failed[b] != nil {
			continue
		}
		r, err := Open(ctx, lane, layout, "", nil, On(b))
		if err != nil {
			failed[b] = err
			continue
		}
		opened[b] = r
	}
	var wg sync.WaitGroup
	errs := make([]error, len(recs))
	for i, rec := range recs {
		r := opened[backendOf(rec)]
		if r == nil {
			errs[i] = failed[backendOf(rec)]
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.Terminate(ctx, filepath.Dir(rec.StatusPath), grace, false)
		}()
	}
	wg.Wait()
	return errs
}

func backendOf(rec *runtime.Record) string {
	if rec.SessionBackend == runtime.BackendKubernetes {
		return config.BackendKubernetes
	}
	return config.BackendTmux
}
