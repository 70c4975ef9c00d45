package runtime

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// recordWriter owns runtime.json for the runner: every change goes through
// it, and after the terminal write nothing (a late heartbeat) overwrites it.
type recordWriter struct {
	mu   sync.Mutex
	path string
	rec  Record
	done bool
}

func newRecordWriter(p *Payload, now time.Time) *recordWriter {
	start, _, _ := ProcStartTime(os.Getpid())
	return &recordWriter{path: p.RuntimePath, rec: Record{
		SchemaVersion:       SchemaVersion,
		RunID:               p.RunID,
		Lane:                p.Lane,
		WaveNumber:          p.WaveNumber,
		Attempt:             p.Attempt,
		AgentID:             p.AgentID,
		ExecutorID:          p.ExecutorID,
		SessionBackend:      "tmux",
		SocketName:          p.SocketName,
		SessionName:         p.SessionName,
		RunnerPid:           os.Getpid(),
		RunnerStartTime:     start,
		StartedAt:           now,
		LastHeartbeatAt:     now,
		HeartbeatIntervalMs: p.HeartbeatIntervalMs,
		TerminalDisposition: Launching,
		LogPath:             p.LogPath,
		StatusPath:          p.StatusPath,
		PromptHash:          p.PromptHash,
	}}
}

func (w *recordWriter) update(f func(*Record)) error { return w.write(f, true) }

// write applies f and rewrites the record unless it is already final.
func (w *recordWriter) write(f func(*Record), durable bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil
	}
	f(&w.rec)
	if durable {
		return jsonfile.Write(w.path, w.rec)
	}
	return jsonfile.WriteVolatile(w.path, w.rec)
}

func (w *recordWriter) final(f func(*Record)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	f(&w.rec)
	return WriteJSON(w.path, w.rec)
}

// heartbeat rewrites the record every interval with the time and when the
// agent last printed (so lastOutputAt costs no writes of its own).
func (w *recordWriter) heartbeat(ctx context.Context, every time.Duration, now, lastOutput func() time.Time, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			err := w.write(func(r *Record) {
				r.LastHeartbeatAt = now()
				if t := lastOutput(); !t.IsZero() {
					r.LastOutputAt = &t
				}
			}, false)
			if err != nil {
				log.Warn("heartbeat_write_failed", "path", w.path, "err", err)
			}
		}
	}
}
