package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/term"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/kube"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// attachKube attaches the user's terminal to a kubernetes run's agent in
// its pod, or shows the run's log when there is nothing to attach to.
func attachKube(ctx context.Context, lane *config.Lane, w state.Wave, a state.Agent, rec *runtime.Record, stdout, stderr io.Writer) error {
	fallback := func(why string) error {
		if a.LogPath == "" {
			return fmt.Errorf("%s; and the run has no log yet", why)
		}
		return showRunLog(ctx, w, a, why, stdout, stderr)
	}
	if a.State != state.AgentRunning && a.State != state.AgentLaunching {
		return fallback(fmt.Sprintf("run %s is %s, so its pod has no agent to attach to", rec.RunID, a.State))
	}
	k := lane.Runtime.Kubernetes
	c, err := kube.NewClient(k.Kubeconfig, k.Context)
	if err != nil {
		return fallback(fmt.Sprintf("agent %s: cannot attach to its pod: %v", a.ID, err))
	}
	ns, pod, err := c.RunPod(ctx, rec)
	if err == nil {
		err = c.Attachable(ctx, ns, pod)
	}
	if err != nil {
		return fallback(notAttached(a, err))
	}
	fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("attaching to agent %s in pod %s/%s: Ctrl-P Ctrl-Q detaches and leaves it running; every other key, Ctrl-C included, goes to the agent", a.ID, ns, pod)))
	sizes, restore, err := rawTerminal(os.Stdin)
	if err != nil {
		return fmt.Errorf("agent %s: %w", a.ID, err)
	}
	detached, err := c.AttachDetachable(ctx, ns, pod, kube.AttachStreams{Stdin: os.Stdin, Stdout: stdout, Sizes: sizes})
	if restore() {
		fmt.Fprintln(stderr)
	}
	switch {
	case detached:
		fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("detached from agent %s; it keeps running in pod %s/%s", a.ID, ns, pod)))
		return nil
	case ctx.Err() != nil:
		return nil
	case err == nil:
		fmt.Fprintln(stderr, termtext.Escape(fmt.Sprintf("the attach to agent %s in pod %s/%s ended: its container exited or the connection closed (`status` shows how the run ended)", a.ID, ns, pod)))
		return nil
	}
	return fallback(notAttached(a, err))
}

// notAttached says why the attach did not happen, naming the agent.
func notAttached(a state.Agent, err error) string {
	var na *kube.NotAttachableError
	if errors.As(err, &na) {
		na.Agent = a.ID
		return "cannot attach: " + err.Error()
	}
	return fmt.Sprintf("cannot attach to agent %s: %v", a.ID, err)
}

// rawTerminal puts the user's terminal (f) in raw mode, so every key
// reaches the agent as typed, and reports its size: now and after each
// SIGWINCH. restore undoes it and reports whether there was a terminal.
// A stdin that is no terminal is passed as it is, with no sizes.
func rawTerminal(f *os.File) (sizes <-chan kube.TerminalSize, restore func() bool, err error) {
	fd := int(f.Fd())
	if !term.IsTerminal(fd) {
		return nil, func() bool { return false }, nil
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, nil, fmt.Errorf("terminal raw mode: %w", err)
	}
	ch := make(chan kube.TerminalSize)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		first := true
		for {
			if w, h, err := term.GetSize(fd); err == nil {
				for _, size := range kube.AttachSizes(w, h, first) {
					select {
					case ch <- size:
					case <-done:
						return
					}
				}
				first = false
			}
			select {
			case <-winch:
			case <-done:
				return
			}
		}
	}()
	var once atomic.Bool
	return ch, func() bool {
		if once.CompareAndSwap(false, true) {
			close(done)
			signal.Stop(winch)
			_ = term.Restore(fd, old)
		}
		return true
	}, nil
}
