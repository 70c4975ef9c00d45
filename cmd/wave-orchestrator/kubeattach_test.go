package main

import (
	"io"
	"testing"
	"testing/iotest"
)

// Ctrl-P Ctrl-Q detaches and never reaches the agent; everything else
// does, a Ctrl-P that starts no detach included, across read boundaries.
func TestDetachReaderPassesKeysUntilCtrlPCtrlQ(t *testing.T) {
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
	first := attachSizes(120, 40, true)
	if len(first) != 2 || first[0].Width != 121 || first[0].Height != 41 || first[1].Width != 120 || first[1].Height != 40 {
		t.Errorf("first sizes %v, want 121x41 then 120x40", first)
	}
	if later := attachSizes(100, 30, false); len(later) != 1 || later[0].Width != 100 || later[0].Height != 30 {
		t.Errorf("resize sizes %v, want 100x30", later)
	}
}
