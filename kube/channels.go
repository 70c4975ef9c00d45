package kube

import (
	"context"
	"encoding/json"
	"errors"
	"io"
)

// The v5.channel.k8s.io protocol: each binary message starts with its
// channel's number; the client closes its stdin with a message on the
// close channel naming stdin.
const (
	chanStdin  = 0
	chanStdout = 1
	chanStderr = 2
	chanError  = 3
	chanResize = 4
	chanClose  = 255
)

// runChannels carries s over conn until the far end closes (nil, or the
// error its Status on the error channel says), the connection breaks or
// ctx ends.
func runChannels(ctx context.Context, conn *wsConn, s AttachStreams, out io.Writer) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			conn.close()
		case <-done:
		}
	}()
	if s.Stdin != nil {
		go pumpStdin(conn, s.Stdin)
	}
	if s.Sizes != nil {
		go pumpSizes(conn, s.Sizes, done)
	}
	var status error
	gotStatus := false
	for {
		msg, err := conn.readMessage()
		if errors.Is(err, io.EOF) || (gotStatus && errors.Is(err, errWSNoClose)) {
			// Closed, or dropped after the far end said how it ended.
			conn.close()
			return status
		}
		if err != nil {
			conn.close()
			return err
		}
		if len(msg) < 2 {
			continue
		}
		switch msg[0] {
		case chanStdout, chanStderr:
			if _, err := out.Write(msg[1:]); err != nil {
				conn.close()
				return err
			}
		case chanError:
			status, gotStatus = statusError(msg[1:]), true
		}
	}
}

// statusError is the error a Status on the error channel says (nil for
// success).
func statusError(b []byte) error {
	var st Status
	if err := json.Unmarshal(b, &st); err != nil {
		return errors.New(string(b))
	}
	if st.Status == statusSuccess {
		return nil
	}
	return &StatusError{Status: st}
}

func pumpStdin(conn *wsConn, in io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			if conn.writeMessage(append([]byte{chanStdin}, buf[:n]...)) != nil {
				return
			}
		}
		if err != nil {
			_ = conn.writeMessage([]byte{chanClose, chanStdin})
			return
		}
	}
}

func pumpSizes(conn *wsConn, sizes <-chan TerminalSize, done <-chan struct{}) {
	for {
		select {
		case sz, ok := <-sizes:
			if !ok {
				return
			}
			b, _ := json.Marshal(sz)
			if conn.writeMessage(append([]byte{chanResize}, b...)) != nil {
				return
			}
		case <-done:
			return
		}
	}
}
