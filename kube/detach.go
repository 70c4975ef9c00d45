package kube

import (
	"context"
	"io"
	"sync/atomic"
)

// The detach keys of an attach to a pod: Ctrl-P then Ctrl-Q, docker's
// convention and kubectl's --detach-keys default. The Kubernetes attach
// protocol has none of its own (every byte goes to the container), so
// they are caught on this side, before the keys leave the machine.
const (
	ctrlP = 0x10
	ctrlQ = 0x11
)

// AttachDetachable is Attach with the detach keys: Ctrl-P Ctrl-Q in
// s.Stdin ends the attach, is never sent, and leaves the agent running;
// detached says that is how it ended (err is then nil). A Ctrl-P
// followed by any other key reaches the agent with that key.
func (c *Client) AttachDetachable(ctx context.Context, namespace, pod string, s AttachStreams) (detached bool, err error) {
	return detachable(ctx, s, func(ctx context.Context, s AttachStreams) error {
		return c.Attach(ctx, namespace, pod, s)
	})
}

// detachable runs attach with s.Stdin watched for the detach keys, which
// cancel attach's context.
func detachable(ctx context.Context, s AttachStreams, attach func(context.Context, AttachStreams) error) (bool, error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	var detached atomic.Bool
	if s.Stdin != nil {
		s.Stdin = &detachReader{r: s.Stdin, detach: func() { detached.Store(true); cancel() }}
	}
	err := attach(actx, s)
	if detached.Load() {
		return true, nil
	}
	return false, err
}

// AttachSizes are the sizes to send for a terminal of w×h: at attach
// (first) a size one larger before it, so that an agent whose terminal
// keeps its size still redraws for the new viewer (as kubectl attach
// does); on a resize just w×h.
func AttachSizes(w, h int, first bool) []TerminalSize {
	size := TerminalSize{Width: uint16(w), Height: uint16(h)}
	if !first {
		return []TerminalSize{size}
	}
	return []TerminalSize{{Width: size.Width + 1, Height: size.Height + 1}, size}
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
