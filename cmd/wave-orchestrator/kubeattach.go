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

// The detach keys of an attach to a pod: Ctrl-P then Ctrl-Q, docker's
// convention and kubectl's --detach-keys default. The Kubernetes attach
// protocol has none of its own (every byte goes to the container), so
// they are caught here, before the keys leave this machine.
const (
	ctrlP = 0x10
	ctrlQ = 0x11
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
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var detached atomic.Bool
	in := &detachReader{r: os.Stdin, detach: func() { detached.Store(true); cancel() }}
	sizes, restore, err := rawTerminal(os.Stdin)
	if err != nil {
		return fmt.Errorf("agent %s: %w", a.ID, err)
	}
	err = c.Attach(actx, ns, pod, kube.AttachStreams{Stdin: in, Stdout: stdout, Sizes: sizes})
	if restore() {
		fmt.Fprintln(stderr)
	}
	switch {
	case detached.Load():
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
				for _, size := range attachSizes(w, h, first) {
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

// attachSizes are the sizes to send for a terminal of w×h: at attach a
// size one larger first, so that an agent whose terminal keeps its size
// still redraws for the new viewer (as kubectl attach does).
func attachSizes(w, h int, first bool) []kube.TerminalSize {
	size := kube.TerminalSize{Width: uint16(w), Height: uint16(h)}
	if !first {
		return []kube.TerminalSize{size}
	}
	return []kube.TerminalSize{{Width: size.Width + 1, Height: size.Height + 1}, size}
}

// detachReader passes the user's keys on until Ctrl-P Ctrl-Q, which it
// swallows, calls detach and ends the input. A Ctrl-P followed by any
// other key goes on with that key, so the agent still gets its Ctrl-P.
type detachReader struct {
	r      io.Reader
	detach func()
	held   bool   // a Ctrl-P waits for the next key
	out    []byte // keys to pass on
	buf    [256]byte
	done   bool
}

func (d *detachReader) Read(p []byte) (int, error) {
	for len(d.out) == 0 {
		if d.done {
			return 0, io.EOF
		}
		n, err := d.r.Read(d.buf[:])
		for _, c := range d.buf[:n] {
			if d.held {
				d.held = false
				if c == ctrlQ {
					d.done = true
					d.detach()
					break
				}
				d.out = append(d.out, ctrlP)
			}
			if c == ctrlP {
				d.held = true
				continue
			}
			d.out = append(d.out, c)
		}
		if err != nil {
			if d.held {
				d.out, d.held = append(d.out, ctrlP), false
			}
			if len(d.out) == 0 {
				return 0, err
			}
			d.done = true
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}
