package kube

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"

	"github.com/gorilla/websocket"
)

// Ctrl-P Ctrl-Q detaches and never reaches the agent; everything else
// does, a Ctrl-P that starts no detach included, across read boundaries.
func TestDetachReaderPassesKeysUntilCtrlPCtrlQ(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, in, out string
		detached      bool
	}{
		{"plain keys and Ctrl-C", "ls\x03\r", "ls\x03\r", false},
		{"detach", "hello\x10\x11after", "hello", true},
		{"Ctrl-P then another key", "\x10a\x10\x10\x11", "\x10a\x10", true},
		{"Ctrl-Q alone", "\x11x", "\x11x", false},
		{"Ctrl-P at the end of input", "abc\x10", "abc\x10", false},
	} {
		for _, oneByte := range []bool{false, true} {
			var src io.Reader = &onceReader{s: tc.in}
			if oneByte {
				src = iotest.OneByteReader(&onceReader{s: tc.in})
			}
			detached := false
			d := &detachReader{r: src, detach: func() { detached = true }}
			got, err := io.ReadAll(d)
			if err != nil || string(got) != tc.out || detached != tc.detached {
				t.Errorf("%s (one byte a read: %v): passed %q (err %v) detached %v; want %q detached %v",
					tc.name, oneByte, got, err, detached, tc.out, tc.detached)
			}
		}
	}
}

// onceReader returns its string in one read, then EOF.
type onceReader struct{ s string }

func (o *onceReader) Read(p []byte) (int, error) {
	if o.s == "" {
		return 0, io.EOF
	}
	n := copy(p, o.s)
	o.s = o.s[n:]
	return n, nil
}

func TestAttachSizesGrowFirstSoTheAgentRedraws(t *testing.T) {
	t.Parallel()
	first := AttachSizes(120, 40, true)
	if len(first) != 2 || first[0].Width != 121 || first[0].Height != 41 || first[1].Width != 120 || first[1].Height != 40 {
		t.Errorf("first sizes %v, want 121x41 then 120x40", first)
	}
	if later := AttachSizes(100, 30, false); len(later) != 1 || later[0].Width != 100 || later[0].Height != 30 {
		t.Errorf("resize sizes %v, want 100x30", later)
	}
}

// Ctrl-P Ctrl-Q in the middle of an attach ends it as a detach: the keys
// before them reach the agent, the attach returns though the agent's end
// stays open, and it is no error.
func TestAttachDetachesOnCtrlPCtrlQAndLeavesTheAgentAlone(t *testing.T) {
	t.Parallel()
	keys := make(chan string, 2)
	up := websocket.Upgrader{Subprotocols: []string{"v5.channel.k8s.io"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		conn, err := up.Upgrade(w, req, nil)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer conn.Close()
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil {
				return // the detached client went away; the agent would go on
			}
			if len(msg) > 1 && msg[0] == 0 { // stdin
				keys <- string(msg[1:])
			}
		}
	}))
	defer srv.Close()
	c := hostClient(t, srv.URL)
	stdin, typing := io.Pipe()
	defer typing.Close()
	typed := make(chan string, 1)
	go func() {
		_, _ = io.WriteString(typing, "ls")
		typed <- <-keys // the agent has the keys typed before the detach
		_, _ = io.WriteString(typing, "\x10\x11rm -rf")
	}()
	detached, err := detachable(testCtx(t), AttachStreams{Stdin: stdin, Stdout: io.Discard},
		func(ctx context.Context, s AttachStreams) error { return c.stream(ctx, "agents", "p", s) })
	if !detached || err != nil {
		t.Fatalf("detached %v, err %v; want a detach and no error", detached, err)
	}
	if got := <-typed; got != "ls" {
		t.Errorf("agent got %q, want only the keys before the detach", got)
	}
}
