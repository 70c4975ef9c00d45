package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// The MCP server runs its tools' commands side by side in one process:
// each gets its own command tree and output, none sees another's, and
// they agree with one run alone (go test -race checks they share no
// state).
func TestToolCommandsRunSideBySideInOneProcess(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	if o := runInProcess(ctx, []string{"--repo-root=" + root, "init"}); o.Code != 0 {
		t.Fatalf("init: %+v", o)
	}
	lines := [][]string{
		{"--repo-root=" + root, "questions", "--json"},
		{"--repo-root=" + root, "usage", "--json", "--by=wave"},
		{"--repo-root=" + root, "status", "--json", "--wave=0"},
		{"--repo-root=" + root, "status", "--json", "--wave=9"},
	}
	alone := make([]string, len(lines))
	for i, a := range lines {
		o := runInProcess(ctx, a)
		alone[i] = o.Err + strings.Join(strings.Fields(withoutClock(o.Stdout)), " ")
	}
	if !strings.Contains(alone[3], "no wave 9") {
		t.Fatalf("status --wave 9: %q", alone[3])
	}
	var wg sync.WaitGroup
	for range 4 {
		for i, a := range lines {
			wg.Go(func() {
				o := runInProcess(ctx, a)
				if got := o.Err + strings.Join(strings.Fields(withoutClock(o.Stdout)), " "); got != alone[i] {
					t.Errorf("%v side by side:\n%s\nalone:\n%s", a, got, alone[i])
				}
			})
		}
	}
	wg.Wait()
}

// withoutClock drops status's generatedAt line, the one field that moves
// between two reads.
func withoutClock(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, `"generatedAt"`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// An in-process command ends with the exit code and message the binary
// would: a usage error 2, a coded error its code, any other 1.
func TestAnInProcessCommandEndsAsTheBinaryWould(t *testing.T) {
	cases := []struct {
		err  error
		code int
		msg  string
	}{
		{nil, exitcode.OK, ""},
		{usageError{errors.New("--wave -2: bad")}, exitcode.Usage, "--wave -2: bad"},
		{withCode(exitcode.LaneBusy, errors.New("busy")), exitcode.LaneBusy, "busy"},
		{withCode(exitcode.StatusInputRequired, nil), exitcode.StatusInputRequired, ""},
		{errors.New("boom"), exitcode.Failed, "boom"},
	}
	for _, c := range cases {
		if code, msg := exitOf(c.err); code != c.code || msg != c.msg {
			t.Errorf("exitOf(%v) = %d %q, want %d %q", c.err, code, msg, c.code, c.msg)
		}
	}
	o := runInProcess(context.Background(), []string{"status", "--bogus"})
	if o.Code != exitcode.Usage || !strings.Contains(o.Err, "--bogus") {
		t.Fatalf("an unknown flag in process: %+v", o)
	}
}
