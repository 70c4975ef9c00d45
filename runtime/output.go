package runtime

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// The pane gets output in bursts of up to paneQueueBytes and, sustained,
// paneBytesPerSec (a flood is unreadable in a pane anyway, and tmux
// rendering it would take a core from the agent), at most one write per
// paneFrame; the rest is dropped from the pane, never from the log.
const (
	paneQueueBytes  = 1 << 20
	paneBytesPerSec = 4 << 20
	paneFrame       = 10 * time.Millisecond
)

// sink copies agent output to the log, synchronously (it is the record),
// and to the pane through a bounded queue that drops when the pane is slow
// or gone: the agent never waits for tmux to render.
type sink struct {
	mu   sync.Mutex // orders log writes
	log  io.Writer
	pane *paneQueue
	// last is when the agent last printed (Unix ns; 0 before any output).
	last atomic.Int64
	now  func() time.Time
}

// newSink writes to log and pane; onLost runs once, when the pane turns
// out to be gone.
func newSink(log, pane io.Writer, now func() time.Time, onLost func()) *sink {
	// The pane shows JSON event streams as their text (see paneRender);
	// the log keeps them as printed.
	return &sink{log: log, pane: newPaneQueue(newPaneRender(pane), paneQueueBytes, onLost), now: now}
}

// agentOutput records output of the agent.
func (s *sink) agentOutput(p []byte) {
	s.last.Store(s.now().UnixNano())
	s.write(p)
}

func (s *sink) write(p []byte) {
	s.mu.Lock()
	s.log.Write(p)
	s.mu.Unlock()
	s.pane.write(p)
}

// logLine writes a line of the runner's own.
func (s *sink) logLine(line string) {
	s.write([]byte("\r\n" + line + "\r\n"))
}

// lastOutput is when the agent last printed, or zero.
func (s *sink) lastOutput() time.Time {
	if n := s.last.Load(); n != 0 {
		return time.Unix(0, n)
	}
	return time.Time{}
}

// paneQueue feeds the pane from its own goroutine.
type paneQueue struct {
	w       io.Writer
	limit   int
	mu      sync.Mutex
	tokens  float64 // bytes the pane may still take now (token bucket)
	filled  time.Time
	cond    *sync.Cond
	buf     []byte
	dropped int64
	lost    bool
	closed  bool
	done    chan struct{}
	onLost  sync.Once
	lostFn  func()
}

func newPaneQueue(w io.Writer, limit int, onLost func()) *paneQueue {
	q := &paneQueue{w: w, limit: limit, done: make(chan struct{}), lostFn: onLost, tokens: float64(limit), filled: time.Now()}
	q.cond = sync.NewCond(&q.mu)
	go q.run()
	return q
}

// write queues p, or counts it dropped when the queue is full; it never
// blocks on the pane.
func (q *paneQueue) write(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.lost || q.closed {
		return
	}
	now := time.Now()
	q.tokens = min(float64(q.limit), q.tokens+now.Sub(q.filled).Seconds()*paneBytesPerSec)
	q.filled = now
	if len(q.buf)+len(p) > q.limit || q.tokens < float64(len(p)) {
		q.dropped += int64(len(p))
	} else {
		q.tokens -= float64(len(p))
		q.buf = append(q.buf, p...)
	}
	q.cond.Signal()
}

func (q *paneQueue) run() {
	defer close(q.done)
	var spare []byte
	var last time.Time
	for {
		// Coalesce: one write a frame is all a pane can show.
		if d := paneFrame - time.Since(last); d > 0 {
			time.Sleep(d)
		}
		q.mu.Lock()
		for len(q.buf) == 0 && q.dropped == 0 && !q.closed && !q.lost {
			q.cond.Wait()
		}
		data, dropped, stop := q.buf, q.dropped, q.lost || q.closed && len(q.buf) == 0 && q.dropped == 0
		q.buf, q.dropped = spare[:0], 0
		q.mu.Unlock()
		if stop {
			return
		}
		last = time.Now()
		if dropped > 0 {
			if _, err := fmt.Fprintf(q.w, "\r\n[wave] the pane fell behind: %d bytes of output are only in agent.log\r\n", dropped); err != nil {
				q.markLost()
				return
			}
		}
		if len(data) > 0 {
			if _, err := q.w.Write(data); err != nil {
				q.markLost()
				return
			}
		}
		spare = data
	}
}

// markLost stops all pane output: its terminal is gone.
func (q *paneQueue) markLost() {
	q.mu.Lock()
	q.lost, q.buf = true, nil
	q.cond.Signal()
	q.mu.Unlock()
	if q.lostFn != nil {
		q.onLost.Do(q.lostFn)
	}
}

func (q *paneQueue) isLost() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lost
}

// close lets the pane show what is queued, waiting at most d.
func (q *paneQueue) close(d time.Duration) {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	q.mu.Unlock()
	select {
	case <-q.done:
	case <-time.After(d):
	}
}

// input forwards the pane's keystrokes to the current agent's pty.
type input struct {
	mu      sync.Mutex
	dst     io.Writer
	restore func()
}

func newInput(f *os.File) *input {
	in := &input{restore: func() {}}
	if f == nil {
		return in
	}
	if term.IsTerminal(int(f.Fd())) {
		// Raw: keystrokes reach the agent's own line discipline unchanged.
		if st, err := term.MakeRaw(int(f.Fd())); err == nil {
			in.restore = func() { term.Restore(int(f.Fd()), st) }
		}
	}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			if n > 0 {
				in.mu.Lock()
				if in.dst != nil {
					in.dst.Write(buf[:n])
				}
				in.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	return in
}

func (in *input) set(w io.Writer) {
	in.mu.Lock()
	in.dst = w
	in.mu.Unlock()
}
