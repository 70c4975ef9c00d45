package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// Stdio is the runner's terminal: the tmux pane. In may be nil (no input).
type Stdio struct {
	In  *os.File
	Out io.Writer
}

// Runner runs one agent for the `agent-run` command. Its clock and the wait
// between rate-limit retries are fields so tests need not sleep.
type Runner struct {
	Now    func() time.Time
	After  func(time.Duration) <-chan time.Time
	Jitter func() float64 // in [0,1)
	Logger *slog.Logger
}

// RunAgent runs the agent described by the launch.json at payloadPath and
// returns the runner's exit code (the agent's final code).
func RunAgent(ctx context.Context, payloadPath string, stdio Stdio) int {
	r := &Runner{Now: time.Now, After: time.After, Jitter: rand.Float64, Logger: slog.Default()}
	return r.Run(ctx, payloadPath, stdio)
}

// outcome is how one start of the agent ended.
type outcome struct {
	code        int
	signal      string // the agent died by this signal
	received    string // the runner got this signal and forwarded it
	rateLimited bool
	startErr    error
}

// Run is RunAgent with this runner's clock.
func (r *Runner) Run(ctx context.Context, payloadPath string, stdio Stdio) int {
	p, err := ReadPayload(payloadPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent-run: payload %s: %v\n", payloadPath, err)
		return 2
	}
	p.FillPaths()
	if p.HeartbeatIntervalMs <= 0 {
		p.HeartbeatIntervalMs = 2000
	}
	if stdio.Out == nil {
		stdio.Out = io.Discard
	}
	logf, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent-run: log: %v\n", err)
		return 2
	}
	defer logf.Close()
	out := &sink{log: logf, pane: stdio.Out}

	rw := newRecordWriter(p, r.Now())
	if err := rw.update(func(*Record) {}); err != nil {
		fmt.Fprintf(os.Stderr, "agent-run: %v\n", err)
		return 2
	}
	env, err := takeEnv(p, os.Environ())
	if err != nil {
		// Never fall back to the pane's environment: it may be stale.
		return r.finish(p, rw, out, r.startFailed(out, err))
	}
	hbCtx, stopHB := context.WithCancel(context.Background())
	defer stopHB()
	go rw.heartbeat(hbCtx, time.Duration(p.HeartbeatIntervalMs)*time.Millisecond, r.Now, r.Logger)

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGWINCH)
	defer signal.Stop(sigs)
	// The pane may vanish under us; writes to it must fail, not kill us.
	// Catch SIGPIPE rather than ignore it: an ignored signal stays ignored
	// across exec, a caught one is reset, and agents need the default.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	in := newInput(stdio.In)
	defer in.restore()

	var res outcome
	for k := 0; ; k++ {
		res = r.startOnce(ctx, p, env, rw, out, in, sigs)
		if res.received != "" || res.startErr != nil || res.code == 0 || !res.rateLimited || k >= p.RateLimit.Retries {
			break
		}
		d := rateLimitDelay(p.RateLimit, k+1, r.Jitter())
		out.logLine(fmt.Sprintf("[wave] rate-limit detected for %s; retry %d/%d after %s", p.AgentID, k+1, p.RateLimit.Retries, fmtSeconds(d)))
		if sig := r.wait(ctx, d, sigs); sig != "" {
			res.received = sig
			break
		}
	}
	stopHB()
	return r.finish(p, rw, out, res)
}

// wait waits d, returning early with the name of a terminating signal.
func (r *Runner) wait(ctx context.Context, d time.Duration, sigs <-chan os.Signal) string {
	t := r.After(d)
	for {
		select {
		case <-t:
			return ""
		case <-ctx.Done():
			return "context canceled"
		case s := <-sigs:
			if s != syscall.SIGWINCH {
				return unix.SignalName(s.(syscall.Signal))
			}
		}
	}
}

func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// finish appends the log line, then writes status.json, then the terminal
// record: whoever sees the terminal record can read a complete log.
func (r *Runner) finish(p *Payload, rw *recordWriter, out *sink, res outcome) int {
	out.logLine(fmt.Sprintf("[wave] %s finished with code %d", p.RunID, res.code))
	now := r.Now()
	disp, reason := disposition(res)
	st := Status{Code: res.code, Signal: res.signal, PromptHash: p.PromptHash, OrchestratorID: p.OrchestratorID, Attempt: p.Attempt, CompletedAt: now}
	if err := WriteJSON(p.StatusPath, st); err != nil {
		r.Logger.Error("status_write_failed", "path", p.StatusPath, "err", err)
	}
	code := res.code
	err := rw.final(func(rec *Record) {
		rec.TerminalDisposition = disp
		rec.ExitCode = &code
		rec.Signal = res.signal
		rec.ExitReason = reason
		rec.FinishedAt = &now
		rec.LastHeartbeatAt = now
	})
	if err != nil {
		r.Logger.Error("record_write_failed", "path", p.RuntimePath, "err", err)
	}
	return res.code
}

// deadlineReason marks a run the runner stopped at its deadline.
const deadlineReason = "deadline passed"

// disposition maps an outcome onto the record's terminal disposition.
func disposition(res outcome) (string, string) {
	switch {
	case res.startErr != nil:
		return Failed, "start failed: " + res.startErr.Error()
	case res.received == deadlineReason:
		return Terminated, deadlineReason
	case res.received != "":
		return Terminated, "runner received " + res.received
	case res.signal != "":
		return Terminated, "killed by " + res.signal
	case res.code == 0:
		return Completed, "exit code 0"
	default:
		return Failed, fmt.Sprintf("exit code %d", res.code)
	}
}

// sink copies agent output to the log (complete, authoritative) and to the
// pane (best effort: the pane may be gone after kill-session).
type sink struct {
	mu   sync.Mutex
	log  io.Writer
	pane io.Writer
}

func (s *sink) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log.Write(p)
	s.pane.Write(p)
}

func (s *sink) logLine(line string) {
	s.write([]byte("\r\n" + line + "\r\n"))
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
