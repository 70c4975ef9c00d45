package runtime

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// recordWriter owns runtime.json for the runner: every change goes through
// it, and after the terminal write nothing (a late heartbeat) overwrites it.
type recordWriter struct {
	mu     sync.Mutex
	path   string
	rec    Record
	done   bool
	report Reporter // nil for a tmux run
	// usage, when set, is the live usage total each heartbeat records.
	usage func() *usage.Usage
	// git, when set, is the run's checkout as last read (setGit).
	git func() *GitFacts
	log *slog.Logger
}

func newRecordWriter(p *Payload, now time.Time) *recordWriter {
	start, _, _ := ProcStartTime(os.Getpid())
	backend := BackendTmux
	var ref *KubeRef
	if k := p.Kubernetes; k != nil {
		backend = BackendKubernetes
		ref = &KubeRef{Namespace: k.Namespace, Job: k.Name, Pod: os.Getenv("WAVE_POD_NAME")}
	}
	return &recordWriter{path: p.RuntimePath, rec: Record{
		Kubernetes:          ref,
		SchemaVersion:       SchemaVersion,
		RunID:               p.RunID,
		Lane:                p.Lane,
		WaveNumber:          p.WaveNumber,
		Attempt:             p.Attempt,
		AgentID:             p.AgentID,
		ExecutorID:          p.ExecutorID,
		SessionBackend:      backend,
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

// snapshot returns the record as last written.
func (w *recordWriter) snapshot() Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rec
}

func (w *recordWriter) update(f func(*Record)) error { return w.write(f, true) }

// setGit makes every later heartbeat carry the checkout's facts.
func (w *recordWriter) setGit(facts func() *GitFacts) {
	w.mu.Lock()
	w.git = facts
	w.mu.Unlock()
}

// write applies f and rewrites the record unless it is already final.
func (w *recordWriter) write(f func(*Record), durable bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil
	}
	f(&w.rec)
	var err error
	if durable {
		err = jsonfile.Write(w.path, w.rec)
	} else {
		err = jsonfile.WriteVolatile(w.path, w.rec)
	}
	if w.report != nil {
		// The report is the record that counts for a kubernetes run; the
		// file is the pod's own copy.
		ctx, cancel := context.WithTimeout(context.Background(), ReportTimeout)
		defer cancel()
		if rerr := w.report.Report(ctx, w.rec); rerr != nil {
			w.logger().Warn("report_failed", "run", w.rec.RunID, "err", rerr)
		}
		return nil
	}
	return err
}

func (w *recordWriter) logger() *slog.Logger {
	if w.log == nil {
		return slog.Default()
	}
	return w.log
}

func (w *recordWriter) final(f func(*Record)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	f(&w.rec)
	err := WriteJSON(w.path, w.rec)
	if w.report != nil {
		return nil // finishReport publishes it with the status
	}
	return err
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
				if w.usage != nil {
					// The meter only grows: each heartbeat's figure is
					// the run's high-water mark so far.
					r.Usage = w.usage()
				}
				if w.git != nil {
					if g := w.git(); g != nil {
						r.Git = g
					}
				}
			}, false)
			if err != nil {
				log.Warn("heartbeat_write_failed", "path", w.path, "err", err)
			}
		}
	}
}
