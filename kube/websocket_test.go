package kube

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
)

// serverFrame is a frame as a server sends it: unmasked.
func serverFrame(fin bool, op byte, payload []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(payload); {
	case n <= 125:
		out = append(out, byte(n))
	case n <= 0xffff:
		out = binary.BigEndian.AppendUint16(append(out, 126), uint16(n))
	default:
		out = binary.BigEndian.AppendUint64(append(out, 127), uint64(n))
	}
	return append(out, payload...)
}

// fakeConn is a connection whose far end sent in and reads what we
// write.
type fakeConn struct {
	io.Reader
	out    bytes.Buffer
	closed bool
}

func (f *fakeConn) Write(p []byte) (int, error) { return f.out.Write(p) }
func (f *fakeConn) Close() error                { f.closed = true; return nil }

func testWSConn(in []byte) (*wsConn, *fakeConn) {
	f := &fakeConn{Reader: bytes.NewReader(in)}
	c := newWSConn(f)
	c.mask = func(b []byte) error { copy(b, []byte{1, 2, 3, 4}); return nil }
	return c, f
}

// A client frame is masked with its key and carries its length in the
// shortest of the three forms; the server can unmask it back.
func TestWebSocketClientFramesAreMasked(t *testing.T) {
	for _, n := range []int{0, 1, 125, 126, 0xffff, 0x10000} {
		payload := bytes.Repeat([]byte("k"), n)
		var buf bytes.Buffer
		if err := writeWSFrame(&buf, func(b []byte) error { copy(b, []byte{1, 2, 3, 4}); return nil }, true, wsBinary, payload); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if b[0] != 0x82 || b[1]&0x80 == 0 {
			t.Fatalf("len %d: header % x, want FIN+binary and the mask bit", n, b[:2])
		}
		hdr := 2
		switch {
		case n > 0xffff:
			hdr = 10
		case n > 125:
			hdr = 4
		}
		if got := len(b) - hdr - 4; got != n {
			t.Fatalf("len %d: frame of %d bytes, header %d", n, len(b), hdr)
		}
		if n > 0 && b[hdr+4] != 'k'^1 {
			t.Errorf("len %d: first byte %#x is not masked with the key", n, b[hdr+4])
		}
		f, err := readWSFrame(bufio.NewReader(bytes.NewReader(b)))
		if err != nil || !bytes.Equal(f.payload, payload) || f.op != wsBinary || !f.fin {
			t.Errorf("len %d: read back %d bytes op %d fin %v: %v", n, len(f.payload), f.op, f.fin, err)
		}
	}
}

// A fragmented message arrives whole, a ping inside it is answered with
// a pong, and a normal close is answered and ends the reading with
// io.EOF.
func TestWebSocketReadsFragmentsAnswersPingsAndCloses(t *testing.T) {
	var in []byte
	in = append(in, serverFrame(false, wsBinary, []byte{1, 'h', 'e'})...)
	in = append(in, serverFrame(true, wsPing, []byte("are you there"))...)
	in = append(in, serverFrame(false, wsContinuation, []byte("ll"))...)
	in = append(in, serverFrame(true, wsContinuation, []byte("o"))...)
	in = append(in, serverFrame(true, wsBinary, bytes.Repeat([]byte("x"), 70000))...)
	in = append(in, serverFrame(true, wsClose, []byte{0x03, 0xe8, 'b', 'y', 'e'})...)
	c, f := testWSConn(in)
	msg, err := c.readMessage()
	if err != nil || string(msg) != "\x01hello" {
		t.Fatalf("message %q %v", msg, err)
	}
	pong, err := readWSFrame(bufio.NewReader(bytes.NewReader(f.out.Bytes())))
	if err != nil || pong.op != wsPong || string(pong.payload) != "are you there" {
		t.Errorf("answer to the ping: %+v %v", pong, err)
	}
	if msg, err := c.readMessage(); err != nil || len(msg) != 70000 {
		t.Errorf("long message: %d bytes %v", len(msg), err)
	}
	f.out.Reset()
	if _, err := c.readMessage(); !errors.Is(err, io.EOF) {
		t.Errorf("after the close: %v, want io.EOF", err)
	}
	reply, err := readWSFrame(bufio.NewReader(bytes.NewReader(f.out.Bytes())))
	if err != nil || reply.op != wsClose || !bytes.Equal(reply.payload, []byte{0x03, 0xe8}) {
		t.Errorf("close reply %+v %v", reply, err)
	}
	if err := c.writeMessage([]byte("late")); err == nil {
		t.Error("a message after the close was sent")
	}
}

func TestWebSocketRefusesMalformedFrames(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"abnormal close", serverFrame(true, wsClose, []byte{0x03, 0xf3, 'o', 'o', 'p', 's'}), "code 1011 oops"},
		{"reserved bits", []byte{0xc2, 0x00}, "reserved bits"},
		{"long control frame", serverFrame(true, wsPing, bytes.Repeat([]byte("p"), 126)), "control frame"},
		{"fragmented control frame", serverFrame(false, wsPing, nil), "control frame"},
		{"stray continuation", serverFrame(true, wsContinuation, []byte("x")), "continuation frame outside"},
		{"message inside a message", append(serverFrame(false, wsText, []byte("a")), serverFrame(true, wsBinary, []byte("b"))...), "new message inside"},
		{"unknown opcode", serverFrame(true, 0x3, nil), "unknown opcode"},
		{"cut inside a frame", serverFrame(true, wsBinary, []byte("abc"))[:3], "EOF"},
		{"cut without a close frame", nil, "without a close frame"},
	} {
		conn, _ := testWSConn(c.in)
		_, err := conn.readMessage()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// The handshake's accept value is RFC 6455's worked example.
func TestWebSocketAcceptIsTheRFCs(t *testing.T) {
	if got := wsAccept("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Errorf("accept %s", got)
	}
}
