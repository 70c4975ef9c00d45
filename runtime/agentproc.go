package runtime

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
// group, with env as the base of its environment (see agentEnv), relays output and signals, and waits for it to exit.
func (r *Runner) startOnce(ctx context.Context, p *Payload, env []string, rw *recordWriter, out *sink, in *input, sigs <-chan os.Signal) outcome {
	if len(p.Argv) == 0 {
		return outcome{code: 127, startErr: errors.New("empty argv")}
	}
	ptmx, tty, err := openPty()
	if err != nil {
		return r.startFailed(out, err)
	}
	defer ptmx.Close()
	if f, ok := out.pane.(*os.File); ok {
		copySize(f, ptmx)
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Dir = p.Cwd
	cmd.Env = agentEnv(env, p)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	if p.Stdin != "" {
		f, err := os.Open(p.Stdin)
		if err != nil {
			tty.Close()
			return r.startFailed(out, err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	// Setsid: own session and process group (pgid = pid) with the pty as
	// controlling terminal (fd 1 in the child).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	err = cmd.Start()
	tty.Close()
	if err != nil {
		return r.startFailed(out, err)
	}
	pid := cmd.Process.Pid
	start, _, _ := ProcStartTime(pid)
	rw.update(func(rec *Record) {
		rec.ExecutorPid, rec.Pgid, rec.ExecutorStartTime = pid, pid, start
		rec.TerminalDisposition = Running
		rec.LastHeartbeatAt = r.Now()
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
				out.write(buf[:n])
				scan.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	var res outcome
	forward := func(s syscall.Signal, name string) {
		if res.received == "" {
			res.received = name
		}
		syscall.Kill(-pid, s)
	}
	done := ctx.Done()
	// The runner backs up the launcher's deadline, so a wedged agent is
	// stopped even when no launcher is alive: one grace after the deadline
	// (the launcher acts first and records a timeout), TERM to the group,
	// then KILL after another grace.
	grace := time.Duration(p.TerminateGraceMs) * time.Millisecond
	if grace <= 0 {
		grace = 5 * time.Second
	}
	var deadline, kill <-chan time.Time
	if p.DeadlineAt != nil {
		deadline = time.After(time.Until(p.DeadlineAt.Add(grace)))
	}
loop:
	for {
		select {
		case <-deadline:
			deadline = nil
			forward(syscall.SIGTERM, deadlineReason)
			kill = time.After(grace)
		case <-kill:
			syscall.Kill(-pid, syscall.SIGKILL)
		case s := <-sigs:
			sig := s.(syscall.Signal)
			if sig == syscall.SIGWINCH {
				if f, ok := out.pane.(*os.File); ok {
					copySize(f, ptmx)
				}
				continue
			}
			forward(sig, unix.SignalName(sig))
		case <-done:
			done = nil
			forward(syscall.SIGTERM, "context canceled")
		case <-waited:
			break loop
		}
	}
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
	return res
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

func (r *Runner) startFailed(out *sink, err error) outcome {
	out.logLine("[wave] agent start failed: " + err.Error())
	return outcome{code: 127, startErr: err}
}
