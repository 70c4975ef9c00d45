package kube

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // RFC 6455's handshake is SHA-1 by definition
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// A minimal WebSocket client (RFC 6455), enough for the attach's
// channel protocol: binary messages, fragmentation, ping/pong and the
// closing handshake. The opening handshake goes through the Client's
// HTTP transport (credentials, proxy, TLS, the tests' wrappers), which
// hands back the upgraded connection.

const (
	wsContinuation = 0x0
	wsText         = 0x1
	wsBinary       = 0x2
	wsClose        = 0x8
	wsPing         = 0x9
	wsPong         = 0xa

	// wsMaxMessage bounds a message the server sends.
	wsMaxMessage = 16 << 20
	wsAcceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
)

// wsConn is the client end of a WebSocket connection.
type wsConn struct {
	rw   io.ReadWriteCloser
	br   *bufio.Reader
	mask func([]byte) error // fills a masking key

	wmu       sync.Mutex
	closeSent bool
}

func newWSConn(rw io.ReadWriteCloser) *wsConn {
	return &wsConn{rw: rw, br: bufio.NewReader(rw), mask: func(b []byte) error { _, err := rand.Read(b); return err }}
}

// wsHandshakeError is a server's refusal of the upgrade: its status and
// body, which hold the API server's Status.
type wsHandshakeError struct {
	code        int
	contentType string
	body        []byte
}

func (e *wsHandshakeError) Error() string {
	return fmt.Sprintf("websocket upgrade refused with HTTP %d: %s", e.code, strings.TrimSpace(string(e.body)))
}

// dialWebSocket opens a WebSocket to u (an http or https URL) through rt,
// offering protocol; it returns the connection and the protocol the
// server chose.
func dialWebSocket(ctx context.Context, rt http.RoundTripper, u *url.URL, protocol string) (*wsConn, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	var nonce [16]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, "", err
	}
	key := base64.StdEncoding.EncodeToString(nonce[:])
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", key)
	req.Header.Set("Sec-WebSocket-Protocol", protocol)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		return nil, "", &wsHandshakeError{code: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}
	}
	rw, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, "", errors.New("websocket upgrade: the HTTP transport gave no connection")
	}
	if got := resp.Header.Get("Sec-WebSocket-Accept"); got != wsAccept(key) ||
		!strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
		rw.Close()
		return nil, "", errors.New("websocket upgrade: the server's answer is not a WebSocket handshake")
	}
	return newWSConn(rw), resp.Header.Get("Sec-WebSocket-Protocol"), nil
}

func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsAcceptGUID)) //nolint:gosec // RFC 6455
	return base64.StdEncoding.EncodeToString(h[:])
}

// writeFrame sends one final frame; a client masks every frame.
func (c *wsConn) writeFrame(op byte, payload []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return errors.New("websocket: closed")
	}
	if op == wsClose {
		c.closeSent = true
	}
	return writeWSFrame(c.rw, c.mask, true, op, payload)
}

// writeWSFrame writes a masked frame whose key mask fills.
func writeWSFrame(w io.Writer, mask func([]byte) error, fin bool, op byte, payload []byte) error {
	buf := make([]byte, 0, 14+len(payload))
	b0 := op
	if fin {
		b0 |= 0x80
	}
	buf = append(buf, b0)
	switch n := len(payload); {
	case n <= 125:
		buf = append(buf, 0x80|byte(n))
	case n <= 0xffff:
		buf = append(buf, 0x80|126)
		buf = binary.BigEndian.AppendUint16(buf, uint16(n))
	default:
		buf = append(buf, 0x80|127)
		buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	}
	var key [4]byte
	if err := mask(key[:]); err != nil {
		return err
	}
	buf = append(buf, key[:]...)
	start := len(buf)
	buf = append(buf, payload...)
	for i := range payload {
		buf[start+i] ^= key[i%4]
	}
	_, err := w.Write(buf)
	return err
}

// wsFrame is one frame as read.
type wsFrame struct {
	fin     bool
	op      byte
	payload []byte
}

// readWSFrame reads one frame (unmasking it should the server mask).
func readWSFrame(r *bufio.Reader) (wsFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return wsFrame{}, err
	}
	f := wsFrame{fin: h[0]&0x80 != 0, op: h[0] & 0x0f}
	if h[0]&0x70 != 0 {
		return wsFrame{}, errors.New("websocket: frame with reserved bits set (no extension was agreed)")
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return wsFrame{}, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return wsFrame{}, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if f.op >= wsClose && (n > 125 || !f.fin) {
		return wsFrame{}, errors.New("websocket: control frame too long or fragmented")
	}
	if n > wsMaxMessage {
		return wsFrame{}, fmt.Errorf("websocket: frame of %d bytes is over the limit", n)
	}
	var key [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(r, key[:]); err != nil {
			return wsFrame{}, err
		}
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return wsFrame{}, err
	}
	if masked {
		for i := range f.payload {
			f.payload[i] ^= key[i%4]
		}
	}
	return f, nil
}

// errWSNoClose: the connection ended without the closing handshake.
var errWSNoClose = fmt.Errorf("websocket: connection closed without a close frame: %w", io.ErrUnexpectedEOF)

// wsCloseError is the server closing with a code other than normal.
type wsCloseError struct {
	Code   int
	Reason string
}

func (e *wsCloseError) Error() string {
	return fmt.Sprintf("websocket closed by the server with code %d %s", e.Code, e.Reason)
}

// readMessage is the next data message, answering pings and the close
// on the way; io.EOF after a normal close.
func (c *wsConn) readMessage() ([]byte, error) {
	var msg []byte
	inMessage := false
	for {
		f, err := readWSFrame(c.br)
		if errors.Is(err, io.EOF) {
			return nil, errWSNoClose
		}
		if err != nil {
			return nil, err
		}
		switch f.op {
		case wsPing:
			if err := c.writeFrame(wsPong, f.payload); err != nil {
				return nil, err
			}
			continue
		case wsPong:
			continue
		case wsClose:
			return nil, c.closed(f.payload)
		case wsText, wsBinary:
			if inMessage {
				return nil, errors.New("websocket: new message inside a fragmented one")
			}
			inMessage, msg = true, f.payload
		case wsContinuation:
			if !inMessage {
				return nil, errors.New("websocket: continuation frame outside a message")
			}
			if len(msg)+len(f.payload) > wsMaxMessage {
				return nil, errors.New("websocket: message over the limit")
			}
			msg = append(msg, f.payload...)
		default:
			return nil, fmt.Errorf("websocket: unknown opcode %d", f.op)
		}
		if f.fin {
			return msg, nil
		}
	}
}

// closed answers the server's close frame and says how it closed.
func (c *wsConn) closed(payload []byte) error {
	code := 1005 // no status
	reason := ""
	if len(payload) >= 2 {
		code, reason = int(binary.BigEndian.Uint16(payload)), string(payload[2:])
	}
	_ = c.writeFrame(wsClose, payload[:min(2, len(payload))])
	if code == 1000 || code == 1005 {
		return io.EOF
	}
	return &wsCloseError{Code: code, Reason: reason}
}

// writeMessage sends p as one binary message.
func (c *wsConn) writeMessage(p []byte) error { return c.writeFrame(wsBinary, p) }

// close sends a normal close (unless one was sent) and drops the
// connection.
func (c *wsConn) close() error {
	_ = c.writeFrame(wsClose, []byte{0x03, 0xe8})
	return c.rw.Close()
}
