package tmuxadapter

import (
	"errors"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		want   error
	}{
		{"no server running on /tmp/x/default\n", ErrNoServer},
		{"error connecting to /tmp/x (No such file or directory)\n", ErrNoServer},
		{"duplicate session: a\n", ErrSessionExists},
		{"can't find session: zz\n", ErrSessionNotFound},
		{"can't find pane: =a:\n", ErrSessionNotFound},
		{"no such session: =a\n", ErrSessionNotFound},
		{"no current target\n", ErrSessionNotFound},
		{"fork failed: Resource temporarily unavailable\n", errTransient},
		{"open terminal failed: too many open files\n", errTransient},
		{"unknown command: frob\n", nil},
		{"", nil},
	} {
		if got := classify(tc.stderr); !errors.Is(got, tc.want) || (tc.want == nil) != (got == nil) {
			t.Errorf("classify(%q) = %v, want %v", tc.stderr, got, tc.want)
		}
	}
}

func TestParsePane(t *testing.T) {
	row := func(f ...string) string {
		s := f[0]
		for _, x := range f[1:] {
			s += sep + x
		}
		return s + "\n"
	}
	p, err := parsePane(row("42", "1", "3", "", "", "sh"))
	if err != nil || !p.Dead || p.DeadStatus == nil || *p.DeadStatus != 3 || p.Pid != 42 {
		t.Fatalf("exit 3: %+v %v", p, err)
	}
	p, err = parsePane(row("42", "1", "", "9", "", ""))
	if err != nil || p.DeadStatus != nil || p.DeadSignal != 9 {
		t.Fatalf("signal 9: %+v %v", p, err)
	}
	p, err = parsePane(row("42", "0", "", "", "", "sleep"))
	if err != nil || p.Dead || p.CurrentCommand != "sleep" || p.ExitOption != nil {
		t.Fatalf("alive: %+v %v", p, err)
	}
	p, err = parsePane(row("42", "1", "", "", "7", "x"))
	if err != nil || p.ExitOption == nil || *p.ExitOption != 7 {
		t.Fatalf("exit option 7: %+v %v", p, err)
	}
	if _, err := parsePane(row("42", "1", "", "", "seven", "x")); err == nil {
		t.Fatal("non-numeric exit option accepted")
	}
	if _, err := parsePane("garbage"); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestEscapeArg(t *testing.T) {
	for in, want := range map[string]string{"a": "a", "a;": `a\;`, ";": `\;`, `a\;`: `a\\;`, "a;b": "a;b"} {
		if got := escapeArg(in); got != want {
			t.Errorf("escapeArg(%q) = %q, want %q", in, got, want)
		}
	}
}
