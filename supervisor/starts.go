package supervisor

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// starts coalesces the run starts of the jobs (jobs.go), which prepare
// their workers side by side: while one Runs.Start runs, the runs whose
// jobs got to their start meanwhile wait and then start together, in one
// Start (one tmux call for all their sessions, after one look for stale
// sessions under their names). No job waits for a batch to fill: a start
// asked for while none runs goes at once.
type starts struct {
	mu      sync.Mutex
	queue   []*startReq
	running bool
}

// startReq is one job's run to start and, once done, the outcome.
type startReq struct {
	p    *runtime.Payload
	err  error
	done chan struct{}
}

// startRun clears what an earlier run left under p's names and starts p,
// in the next batch.
func (s *Supervisor) startRun(ctx context.Context, p *runtime.Payload) error {
	req := &startReq{p: p, done: make(chan struct{})}
	st := &s.starts
	st.mu.Lock()
	st.queue = append(st.queue, req)
	lead := !st.running
	st.running = true
	st.mu.Unlock()
	if lead {
		s.serveStarts(ctx)
	}
	<-req.done
	return req.err
}

// serveStarts starts batches until no start waits.
func (s *Supervisor) serveStarts(ctx context.Context) {
	st := &s.starts
	for {
		st.mu.Lock()
		batch := st.queue
		st.queue = nil
		if len(batch) == 0 {
			st.running = false
			st.mu.Unlock()
			return
		}
		st.mu.Unlock()
		s.startBatch(ctx, batch)
	}
}

// startBatch starts a batch's runs. A batch stops at its first session
// that fails to start, and the runs after it did not start either: each
// of those is started again alone, so one bad run fails only itself.
func (s *Supervisor) startBatch(ctx context.Context, batch []*startReq) {
	ps := make([]*runtime.Payload, len(batch))
	for i, r := range batch {
		ps[i] = r.p
	}
	_ = s.o.Runs.DiscardAll(ctx, ps)
	err := s.o.Runs.Start(ctx, ps)
	var se *runtime.StartError
	// Known started: tmux listed the sessions that came up.
	listed := errors.As(err, &se) && len(se.NotStarted) > 0
	for _, r := range batch {
		switch {
		case err == nil, listed && !slices.Contains(se.NotStarted, r.p.RunDir):
		case len(batch) > 1:
			r.err = s.o.Runs.Start(ctx, []*runtime.Payload{r.p})
		default:
			r.err = err
		}
		close(r.done)
	}
}
