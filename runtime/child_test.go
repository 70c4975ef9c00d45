package runtime

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A child's end is its exit code or the signal that killed it; a child
// waited for past its context's end is sent SIGTERM and still waited for.
func TestAChildEndsWithItsExitCodeOrSignalAndIsTermedOnCancel(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	for _, tc := range []struct {
		script string
		want   Ended
	}{
		{"echo hi; exit 3", Ended{Code: 3}},
		{"exit 0", Ended{}},
		{"kill -9 $$", Ended{Code: -1, Signal: syscall.SIGKILL}},
	} {
		c, err := StartChild([]string{"/bin/sh", "-c", tc.script}, &out, &out)
		if err != nil {
			t.Fatal(err)
		}
		if c.Pid() <= 0 {
			t.Fatalf("pid %d", c.Pid())
		}
		if got, err := c.Wait(t.Context()); err != nil || got != tc.want {
			t.Fatalf("%q: %+v %v, want %+v", tc.script, got, err, tc.want)
		}
	}
	if out.String() != "hi\n" {
		t.Fatalf("output %q", out.String())
	}
	// The child says it is ready, then waits; TERM makes it exit 7.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartChild([]string{"/bin/sh", "-c", "trap 'kill $!; exit 7' TERM; echo ready; sleep 600 & wait"}, w, w)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	line := make([]byte, 6)
	if _, err := r.Read(line); err != nil || string(line) != "ready\n" {
		t.Fatalf("child said %q %v", line, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got, err := c.Wait(ctx); err != nil || got != (Ended{Code: 7}) {
		t.Fatalf("cancelled wait: %+v %v, want exit 7 from its TERM trap", got, err)
	}
	if _, err := StartChild(nil, &out, &out); err == nil {
		t.Fatal("an empty command line started")
	}
}
