package runtime

import (
	"sync"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// meter is the run's usage.Meter shared by the goroutine reading the pty
// (which feeds it), the heartbeat (which records the live total) and the
// supervisor (which enforces the cap). changed wakes the supervisor.
type meter struct {
	mu      sync.Mutex
	m       *usage.Meter // nil: the run is not metered
	changed chan struct{}
}

func newMeter(p *Payload) *meter {
	mt := &meter{changed: make(chan struct{}, 1)}
	if pol := p.Usage; pol != nil {
		mt.m = &usage.Meter{Model: pol.Model, Pricing: pol.Pricing}
	}
	return mt
}

func (mt *meter) write(b []byte) {
	if mt.m == nil {
		return
	}
	mt.mu.Lock()
	changed := mt.m.Write(b)
	mt.mu.Unlock()
	if changed {
		select {
		case mt.changed <- struct{}{}:
		default:
		}
	}
}

// restart counts what the agent reported so far and starts afresh (a
// rate-limit retry starts the agent again).
func (mt *meter) restart() {
	if mt.m == nil {
		return
	}
	mt.mu.Lock()
	mt.m.Restart()
	mt.mu.Unlock()
}

// total is the usage so far; nil when nothing reported any.
func (mt *meter) total() *usage.Usage {
	if mt.m == nil {
		return nil
	}
	mt.mu.Lock()
	defer mt.mu.Unlock()
	return mt.m.Total().Ptr()
}

// check compares the total with the run's cap (see usage.Cap.Check).
func (mt *meter) check(p *Payload) (over, warn string) {
	pol := p.Usage
	if pol == nil || !pol.Cap.Set() {
		return "", ""
	}
	u := mt.total()
	if u == nil {
		return "", ""
	}
	return pol.Cap.Check(*u, pol.WarnAtPercent)
}
