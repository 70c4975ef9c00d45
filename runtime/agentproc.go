package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// After the agent's main process exits, what is left of its process group
// gets SIGHUP and, groupGrace later, SIGKILL; the pty is then read for at
// most drainTimeout more: a stray in another session (setsid) holding the
// terminal open must not keep the runner from recording the exit.
const (
	groupGrace   = time.Second
	drainTimeout = time.Second
)

// startOnce starts the agent on a fresh pty in its own session and process
// group, with env as the base of its environment (see agentEnv), relays
// output and signals, and waits for it to exit.
func (r *Runner) startOnce(ctx context.Context, p *Payload, env []string, rw *recordWriter, out *sink, in *input, sigs <-chan os.Signal, mt *meter) outcome {
	if len(p.Argv) == 0 {
		return outcome{code: exitcode.NotFound, startErr: errors.New("empty argv")}
	}
	cmd, ptmx, err := r.spawn(p, env)
	if err != nil {
		return r.startFailed(out, err)
	}
	defer ptmx.Close()
	pid := cmd.Process.Pid
	start, _, _ := ProcStartTime(pid)
	started := r.Now()
	rw.update(func(rec *Record) {
		rec.ExecutorPid, rec.Pgid, rec.ExecutorStartTime = pid, pid, start
		rec.TerminalDisposition = Running
		rec.LastHeartbeatAt = started
	})
	in.set(ptmx)
	defer in.set(nil)

	var scan rateLimitScanner
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32*1024)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				out.agentOutput(buf[:n])
				scan.Write(buf[:n])
				mt.write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	sv := supervisor{r: r, p: p, pid: pid, ptmx: ptmx, out: out, started: started, mt: mt, rw: rw}
	res := sv.run(ctx, sigs, waited)
	endGroup(pid, start)
	select {
	case <-drained:
	case <-time.After(drainTimeout):
		// The master is non-blocking (see openPty): Close ends the Read.
		ptmx.Close()
		<-drained
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ws.Signaled():
		res.code = 128 + int(ws.Signal())
		res.signal = unix.SignalName(ws.Signal())
	default:
		res.code = ws.ExitStatus()
	}
	res.rateLimited = scan.matched()
	if res.code != 0 && res.received == "" {
		res.usageLimit = scan.usageLimit(r.Now())
	}
	return res
}

// supervisor watches one start of the agent until it exits: it forwards
// stop signals, enforces the deadline and the silence limit, and follows
// the pane.
type supervisor struct {
	r       *Runner
	p       *Payload
	pid     int
	ptmx    *os.File
	out     *sink
	started time.Time
	res     outcome
	kill    <-chan time.Time
	mt      *meter
	rw      *recordWriter
	warned  bool
}

// grace is the TERM → KILL wait.
func (sv *supervisor) grace() time.Duration {
	if g := time.Duration(sv.p.TerminateGraceMs) * time.Millisecond; g > 0 {
		return g
	}
	return DefaultGrace
}

// stop sends s to the agent's group, records why (the first reason
// counts), and arms the KILL that follows one grace later: an agent that
// ignores the signal cannot hang the wave.
func (sv *supervisor) stop(s syscall.Signal, why string) {
	if sv.res.received == "" {
		sv.res.received = why
	}
	syscall.Kill(-sv.pid, s)
	if sv.kill == nil {
		sv.kill = time.After(sv.grace())
	}
}

func (sv *supervisor) run(ctx context.Context, sigs <-chan os.Signal, waited <-chan error) outcome {
	done := ctx.Done()
	// The runner backs up the launcher's deadline, so a wedged agent is
	// stopped even when no launcher is alive: one grace after the deadline
	// (the launcher acts first and records a timeout).
	var deadline <-chan time.Time
	if sv.p.DeadlineAt != nil {
		deadline = time.After(time.Until(sv.p.DeadlineAt.Add(sv.grace())))
	}
	silence := time.Duration(sv.p.SilenceMs) * time.Millisecond
	var check <-chan time.Time
	if silence > 0 {
		t := time.NewTicker(min(max(silence/5, 10*time.Millisecond), time.Second))
		defer t.Stop()
		check = t.C
	}
	for {
		select {
		case <-deadline:
			deadline = nil
			sv.stop(syscall.SIGTERM, deadlineReason)
		case <-sv.kill:
			sv.kill = nil
			syscall.Kill(-sv.pid, syscall.SIGKILL)
		case <-check:
			if quiet := sv.r.Now().Sub(sv.lastOutput()); quiet >= silence && sv.res.received == "" && unread(sv.ptmx) == 0 {
				check = nil
				why := fmt.Sprintf("stalled: no output for %s", quiet.Round(time.Millisecond))
				sv.out.logLine("[wave] no output for " + quiet.Round(time.Millisecond).String() + "; stopping the agent as stalled")
				sv.res.stalled = true
				sv.stop(syscall.SIGTERM, why)
			}
		case <-sv.mt.changed:
			sv.checkBudget()
		case s := <-sigs:
			sv.signal(s.(syscall.Signal))
		case <-done:
			done = nil
			sv.stop(syscall.SIGTERM, "context canceled")
		case <-waited:
			sv.takeQueuedStop(sigs)
			return sv.res
		}
	}
}

// takeQueuedStop records a TERM or INT that reached the runner as its
// agent ended (select picks either when both are ready): the agent ended
// because of that stop, so the run was stopped, not failed. The group is
// not signalled again: the agent is reaped. Later signals (HUP,
// WINCH) are of no use to an ended run.
func (sv *supervisor) takeQueuedStop(sigs <-chan os.Signal) {
	for {
		select {
		case s := <-sigs:
			if sig := s.(syscall.Signal); (sig == syscall.SIGTERM || sig == syscall.SIGINT) && sv.res.received == "" {
				sv.res.received = unix.SignalName(sig)
			}
		default:
			return
		}
	}
}

// checkBudget stops the agent, like a stalled one, once its usage reaches
// the run's cap, and records a warning the first time it passes the
// warning threshold. It runs on every usage change the output reports, so
// the stop comes as soon as the crossing is printed.
func (sv *supervisor) checkBudget() {
	over, warn := sv.mt.check(sv.p)
	switch {
	case over != "" && sv.res.received == "":
		sv.out.logLine("[wave] budget exceeded (" + over + "); stopping the agent")
		sv.res.overBudget = true
		sv.stop(syscall.SIGTERM, "budget exceeded: "+over)
	case warn != "" && !sv.warned:
		sv.warned = true
		sv.out.logLine("[wave] budget warning: " + warn)
		u := sv.mt.total()
		sv.rw.update(func(rec *Record) { rec.BudgetWarning, rec.Usage = warn, u })
	}
}

// signal handles a signal to the runner. HUP is the pane's terminal
// hanging up (tmux closed the session): the pane is gone, the agent is
// not. TERM and INT are a stop, forwarded.
func (sv *supervisor) signal(sig syscall.Signal) {
	switch sig {
	case syscall.SIGWINCH:
		if sv.r.paneFile != nil {
			copySize(sv.r.paneFile, sv.ptmx)
		}
	case syscall.SIGHUP:
		sv.out.pane.markLost()
	default:
		sv.stop(sig, unix.SignalName(sig))
	}
}

// lastOutput is when this start last printed, or when it started.
func (sv *supervisor) lastOutput() time.Time {
	if t := sv.out.lastOutput(); t.After(sv.started) {
		return t
	}
	return sv.started
}

// endGroup stops what the agent left running in its process group: SIGHUP
// as a terminal hangup would, then SIGKILL for those ignoring it.
func endGroup(pgid int, since uint64) {
	if !signalGroup(pgid, since, syscall.SIGHUP) {
		return
	}
	waitUntil(context.Background(), groupGrace, func() bool { return !groupAlive(pgid, since) })
	signalGroup(pgid, since, syscall.SIGKILL)
}

// spawn starts the agent on a new pty and returns it with the pty's master.
func (r *Runner) spawn(p *Payload, env []string) (*exec.Cmd, *os.File, error) {
	ptmx, tty, err := openPty()
	if err != nil {
		return nil, nil, err
	}
	defer tty.Close()
	if r.paneFile != nil {
		copySize(r.paneFile, ptmx)
	}
	cmd, err := agentCmd(p, agentEnv(env, p), r.box)
	if err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	// The sandbox's copies of home files are bwrap's once it started.
	defer closeAll(cmd.ExtraFiles)
	cmd.Dir = p.Cwd
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if p.Stdin != "" {
		f, err := os.Open(p.Stdin)
		if err != nil {
			ptmx.Close()
			return nil, nil, err
		}
		// The child has its own copy once started.
		defer f.Close()
		cmd.Stdin = f
	}
	// Setsid: own session and process group (pgid = pid) with the pty as
	// controlling terminal (fd 1 in the child).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	start := cmd.Start
	if r.box != nil {
		start = func() error { return r.startConfined(cmd) }
	}
	if err := start(); err != nil {
		ptmx.Close()
		return nil, nil, err
	}
	return cmd, ptmx, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

func (r *Runner) startFailed(out *sink, err error) outcome {
	out.logLine("[wave] agent start failed: " + err.Error())
	return outcome{code: exitcode.NotFound, startErr: err}
}
