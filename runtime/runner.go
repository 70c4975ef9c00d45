package runtime

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
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
	// NewReporter, when set, makes the run's Reporter (kubernetes runs).
	NewReporter ReporterFunc
	// NewCheckout, when set, makes the CheckoutKeeper of a run with a
	// Payload.Checkout (which fails without one).
	NewCheckout CheckoutFunc
	// paneFile is the pane's terminal, when it is one (window size).
	paneFile *os.File
	// box is the run's sandbox, when it has one.
	box *sandbox.Box
	// sigs is where the runner takes the signals it handles.
	sigs chan os.Signal
}

// RunAgent runs the agent described by the launch.json at payloadPath and
// returns the runner's exit code (the agent's final code).
func RunAgent(ctx context.Context, payloadPath string, stdio Stdio) int {
	return RunAgentWith(ctx, payloadPath, stdio, Hooks{})
}

// RunAgentWith is RunAgent for runs that need hooks: a Reporter for a
// payload that reports elsewhere too, a CheckoutKeeper for one that owns
// its checkout.
func RunAgentWith(ctx context.Context, payloadPath string, stdio Stdio, h Hooks) int {
	r := &Runner{Now: time.Now, After: time.After, Jitter: rand.Float64, Logger: slog.Default(),
		NewReporter: h.NewReporter, NewCheckout: h.NewCheckout}
	return r.Run(ctx, payloadPath, stdio)
}

// outcome is how one start of the agent ended.
type outcome struct {
	code        int
	signal      string // the agent died by this signal
	received    string // the runner got this signal and forwarded it
	stalled     bool   // the runner stopped a silent agent
	overBudget  bool   // the runner stopped an agent at its budget
	rateLimited bool
	// usageLimit: the CLI said its account is out (not retried here).
	usageLimit *UsageLimit
	startErr   error
}

// Run is RunAgent with this runner's clock.
func (r *Runner) Run(ctx context.Context, payloadPath string, stdio Stdio) int {
	p, err := ReadPayload(payloadPath)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agent-run: payload %s: %v\n", payloadPath, err)
		return 2
	}
	podPaths(p)
	p.FillPaths()
	if p.HeartbeatIntervalMs <= 0 {
		p.HeartbeatIntervalMs = 2000
	}
	var rep Reporter
	if p.Kubernetes != nil && r.NewReporter != nil {
		if rep, err = r.NewReporter(p); err != nil {
			// Without its reporter the run is invisible to its launcher,
			// which would call it lost: better to fail it now, loudly.
			fmt.Fprintf(os.Stderr, "agent-run: run %s: %v\n", p.RunID, err)
			return 2
		}
	}
	if stdio.Out == nil {
		stdio.Out = io.Discard
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	rw := newRecordWriter(p, r.Now())
	rw.report, rw.log = rep, r.Logger
	// The first record names the runner; it is still `launching`, so like
	// a heartbeat it skips the fsyncs (a machine crash loses nothing that
	// matters: the launcher's durable `launching` record stays, and the
	// runner is gone with the machine). It is written while the log is
	// opened and the environment taken; the agent starts only once it is
	// there. The transitions after it (running, the end) are durable.
	first := make(chan error, 1)
	go func() { first <- rw.write(func(*Record) {}, false) }()
	logf, err := openLog(p.LogPath, p.MaxLogBytes)
	if err != nil {
		<-first
		fmt.Fprintf(os.Stderr, "agent-run: %v\n", err)
		return 2
	}
	defer logf.Close()
	env, envErr := takeEnv(p, os.Environ())
	if err := <-first; err != nil {
		fmt.Fprintf(os.Stderr, "agent-run: %v\n", err)
		return 2
	}
	var out *sink
	out = newSink(logf, stdio.Out, r.Now, func() { r.sessionLost(rw, out) })
	r.paneFile, _ = stdio.Out.(*os.File)
	ck, err := r.newCheckout(p)
	if err != nil {
		return r.finish(p, rw, out, r.startFailed(out, err), nil)
	}
	if envErr != nil {
		// Never fall back to the pane's environment: it may be stale.
		return r.finish(p, rw, out, r.startFailed(out, envErr), ck)
	}
	if r.box, err = r.openSandbox(p, agentEnv(env, p), rw); err != nil {
		// Never run an agent the payload says to confine unconfined.
		return r.finish(p, rw, out, r.startFailed(out, err), ck)
	}
	if r.box != nil {
		defer r.box.Close()
	}
	hbCtx, stopHB := context.WithCancel(context.Background())
	defer stopHB()
	mt := newMeter(p)
	rw.usage = mt.total
	go rw.heartbeat(hbCtx, time.Duration(p.HeartbeatIntervalMs)*time.Millisecond, r.Now, out.lastOutput, r.Logger)

	sigs := make(chan os.Signal, 8)
	r.sigs = sigs
	signal.Notify(sigs, runnerSignals...)
	defer signal.Stop(sigs)
	// The pane may vanish under us; writes to it must fail, not kill us.
	// Catch SIGPIPE rather than ignore it: an ignored signal stays ignored
	// across exec, a caught one is reset, and agents need the default.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	if ck != nil {
		// The signals are ours now: a TERM during the clone waits for it.
		if err := ck.prepare(ctx, out); err != nil {
			stopHB()
			return r.finish(p, rw, out, r.startFailed(out, err), ck)
		}
		rw.setGit(ck.gitFacts)
		go ck.keep(hbCtx, r.Now, out)
	}

	in := newInput(stdio.In)
	defer in.restore()

	var res outcome
	for k := 0; ; k++ {
		if k > 0 {
			mt.restart()
		}
		res = r.startOnce(ctx, p, env, rw, out, in, sigs, mt)
		if res.received != "" || res.startErr != nil || res.code == 0 || res.usageLimit != nil || !res.rateLimited || k >= p.RateLimit.Retries {
			break
		}
		d := rateLimitDelay(p.RateLimit, k+1, r.Jitter())
		out.logLine(fmt.Sprintf("[wave] rate-limit detected for %s; retry %d/%d after %s", p.AgentID, k+1, p.RateLimit.Retries, fmtSeconds(d)))
		if sig := r.wait(ctx, d, sigs, out); sig != "" {
			res.received = sig
			break
		}
	}
	stopHB()
	return r.finish(p, rw, out, res, ck)
}

// runnerSignals are the signals the runner handles: the stops it
// forwards, its pane's hangup, the pane's size.
var runnerSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGWINCH}

// wait waits d, returning early with the name of a stop signal.
func (r *Runner) wait(ctx context.Context, d time.Duration, sigs <-chan os.Signal, out *sink) string {
	t := r.After(d)
	for {
		select {
		case <-t:
			return ""
		case <-ctx.Done():
			return "context canceled"
		case s := <-sigs:
			switch s {
			case syscall.SIGWINCH:
			case syscall.SIGHUP:
				out.pane.markLost()
			default:
				return unix.SignalName(s.(syscall.Signal))
			}
		}
	}
}

// sessionLost records that the pane went away (tmux kill-session or
// kill-server hung up its terminal). The agent keeps running: the log is
// its record, and `attach` follows the log when the session is gone.
func (r *Runner) sessionLost(rw *recordWriter, out *sink) {
	now := r.Now()
	out.logLine("[wave] tmux session lost; the agent keeps running and its output goes on to agent.log")
	if err := rw.update(func(rec *Record) { rec.SessionLost, rec.SessionLostAt = true, &now }); err != nil {
		r.Logger.Warn("record_write_failed", "path", rw.path, "err", err)
	}
}

func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// finish appends the log line, then writes status.json, then the terminal
// record: whoever sees the terminal record can read a complete log. Writes
// that fail (a full disk) are retried for RecordRetryMs; should they never
// succeed, the runner's exit code, which is the agent's, reaches the
// launcher as the pane's exit status.
func (r *Runner) finish(p *Payload, rw *recordWriter, out *sink, res outcome, ck *keptCheckout) int {
	if note := sandboxNote(rw.snapshot()); note != "" {
		out.logLine(note)
	}
	if u := res.usageLimit; u != nil {
		out.logLine(usageLimitNotice(p.ExecutorID, *u))
	}
	out.logLine(fmt.Sprintf("[wave] %s finished with code %d", p.RunID, res.code))
	removePrivateFiles(p, out)
	var git *GitFacts
	if ck != nil {
		// The work goes to origin before the record says the run ended:
		// whoever reads the final record may fetch it.
		git = ck.close(out)
	}
	now := r.Now()
	disp, reason := disposition(res)
	st := Status{Code: res.code, Signal: res.signal, PromptHash: p.PromptHash, OrchestratorID: p.OrchestratorID, Attempt: p.Attempt, CompletedAt: now}
	budget := time.Duration(p.RecordRetryMs) * time.Millisecond
	if budget <= 0 {
		budget = defaultRecordRetry
	}
	until := now.Add(budget)
	if !r.retryWrite(out, statusFile, until, func() error { return WriteJSON(p.StatusPath, st) }) {
		r.leaveExitInTmux(p, out, res.code)
	}
	code := res.code
	r.retryWrite(out, runtimeFile, until, func() error {
		return rw.final(func(rec *Record) {
			rec.TerminalDisposition = disp
			rec.ExitCode = &code
			rec.Signal = res.signal
			rec.ExitReason = reason
			rec.Stalled = res.stalled
			rec.BudgetExceeded = res.overBudget
			rec.UsageLimit = res.usageLimit
			if rw.usage != nil {
				rec.Usage = rw.usage()
			}
			rec.FinishedAt = &now
			rec.LastHeartbeatAt = now
			if t := out.lastOutput(); !t.IsZero() {
				rec.LastOutputAt = &t
			}
			if git != nil {
				rec.Git = git
			}
		})
	})
	if ck != nil {
		ck.result(out, rw.snapshot(), st)
	}
	if rw.report != nil {
		rec := rw.snapshot()
		r.retryWrite(out, "final report", until, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), ReportTimeout)
			defer cancel()
			return rw.report.Final(ctx, rec, st)
		})
	}
	out.pane.close(drainTimeout)
	return res.code
}

// defaultRecordRetry is how long the runner tries to record an outcome.
const defaultRecordRetry = 30 * time.Second

// retryWrite runs write until it succeeds or until passes, backing off
// from 50 ms to 2 s, and reports whether it succeeded.
func (r *Runner) retryWrite(out *sink, what string, until time.Time, write func() error) bool {
	for d, n := 50*time.Millisecond, 0; ; d, n = min(2*d, 2*time.Second), n+1 {
		err := write()
		if err == nil {
			return true
		}
		if !r.Now().Before(until) {
			r.Logger.Error("record_write_failed", "file", what, "err", err)
			out.logLine(fmt.Sprintf("[wave] could not write %s: %v; giving up", what, err))
			return false
		}
		if n == 0 {
			out.logLine(fmt.Sprintf("[wave] could not write %s: %v; retrying", what, err))
		}
		<-r.After(d)
	}
}

// leaveExitInTmux stores the agent's exit code in the run's tmux session
// (tmuxadapter.ExitOptionName) when no status file could be written: the
// pane's exit status says the same, but tmux 3.3a sometimes never records
// it.
func (r *Runner) leaveExitInTmux(p *Payload, out *sink, code int) {
	if p.SocketName == "" || p.SessionName == "" || out.pane.isLost() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tm := tmuxadapter.New(p.SocketName, tmuxadapter.WithLogger(r.Logger))
	if err := tm.SetSessionOption(ctx, p.SessionName, tmuxadapter.ExitOptionName, strconv.Itoa(code)); err != nil {
		r.Logger.Warn("exit_option_failed", "session", p.SessionName, "err", err)
	}
}

// deadlineReason marks a run the runner stopped at its deadline.
const deadlineReason = "deadline passed"

// disposition maps an outcome onto the record's terminal disposition.
func disposition(res outcome) (string, string) {
	switch {
	case res.startErr != nil:
		return Failed, "start failed: " + res.startErr.Error()
	case res.stalled, res.overBudget:
		return Terminated, res.received
	case res.received == deadlineReason:
		return Terminated, deadlineReason
	case res.received != "":
		return Terminated, "runner received " + res.received
	case res.signal != "":
		return Terminated, "killed by " + res.signal
	case res.code == 0:
		return Completed, "exit code 0"
	case res.usageLimit != nil:
		return Failed, "usage limit: " + res.usageLimit.Line
	default:
		return Failed, fmt.Sprintf("exit code %d", res.code)
	}
}
