package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// factsEvery is the least time between two readings of a checkout's
// state: git status on a big tree is not free, and heartbeats are often
// more frequent.
const factsEvery = 5 * time.Second

// checkoutTimeout bounds one git step of the runner's (a clone of a big
// repository takes a while; a push at exit must fit the pod's grace).
const checkoutTimeout = 10 * time.Minute

// keptCheckout is the runner's side of a run's checkout: one git step at
// a time, the last facts for the heartbeats.
type keptCheckout struct {
	k     CheckoutKeeper
	every time.Duration // snapshot period; 0: only at stop and exit
	mu    sync.Mutex    // one git step at a time
	ready bool          // Prepare succeeded

	factsMu sync.Mutex
	facts   *GitFacts
}

func (r *Runner) newCheckout(p *Payload) (*keptCheckout, error) {
	if p.Checkout == nil {
		return nil, nil
	}
	if r.NewCheckout == nil {
		return nil, errors.New("the payload has a checkout and this runner cannot keep one")
	}
	k, err := r.NewCheckout(p)
	if err != nil {
		return nil, fmt.Errorf("checkout: %w", err)
	}
	return &keptCheckout{k: k, every: time.Duration(p.Checkout.SnapshotEveryMs) * time.Millisecond}, nil
}

// prepare makes the checkout and reads its first facts.
func (c *keptCheckout) prepare(ctx context.Context, out *sink) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, checkoutTimeout)
	defer cancel()
	if err := c.k.Prepare(ctx); err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	c.ready = true
	out.logLine("[wave] checkout ready")
	c.readFacts(ctx)
	return nil
}

// readFacts refreshes the facts; a failure keeps the last ones.
func (c *keptCheckout) readFacts(ctx context.Context) {
	f, err := c.k.Facts(ctx)
	if err != nil {
		return
	}
	c.factsMu.Lock()
	c.facts = &f
	c.factsMu.Unlock()
}

// gitFacts is the facts as last read (nil before the first).
func (c *keptCheckout) gitFacts() *GitFacts {
	c.factsMu.Lock()
	defer c.factsMu.Unlock()
	if c.facts == nil {
		return nil
	}
	f := *c.facts
	return &f
}

// step runs one git step under the lock with its own timeout, then
// refreshes the facts.
func (c *keptCheckout) step(what string, out *sink, f func(context.Context) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ready {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkoutTimeout)
	defer cancel()
	err := f(ctx)
	if err != nil {
		out.logLine(fmt.Sprintf("[wave] %s failed: %v", what, err))
	}
	c.readFacts(ctx)
	return err
}

// keep reads the facts every factsEvery and snapshots every c.every
// until ctx ends.
func (c *keptCheckout) keep(ctx context.Context, now func() time.Time, out *sink) {
	t := time.NewTicker(factsEvery)
	defer t.Stop()
	last := now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if c.every > 0 && now().Sub(last) >= c.every {
			last = now()
			c.step("snapshot", out, c.k.Snapshot)
			continue
		}
		c.mu.Lock()
		fctx, cancel := context.WithTimeout(ctx, checkoutTimeout)
		c.readFacts(fctx)
		cancel()
		c.mu.Unlock()
	}
}

// close is the checkout's part of the runner's exit: a last snapshot,
// then the worker branch. It returns the facts for the final record.
func (c *keptCheckout) close(out *sink) *GitFacts {
	c.step("snapshot", out, c.k.Snapshot)
	c.step("push of the worker branch", out, c.k.PushBranch)
	return c.gitFacts()
}

// result pushes the final record and status to the result ref.
func (c *keptCheckout) result(out *sink, rec Record, st Status) {
	c.step("push of the run's result", out, func(ctx context.Context) error { return c.k.PushResult(ctx, rec, st) })
}
