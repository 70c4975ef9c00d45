package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// stdoutOf runs f with os.Stdout sent to a file and returns what f wrote.
func stdoutOf(t *testing.T, f func() int) (int, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdout")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = out
	code := f()
	os.Stdout = saved
	out.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return code, string(data)
}

// The runner and the simulated agents skip the command tree for the forms
// the launcher writes; what they do must be what the command would do.
func TestInternalCommandsBehaveTheSameWithoutTheCommandTree(t *testing.T) {
	dir := t.TempDir()
	prompt := filepath.Join(dir, "prompt.md")
	if err := os.WriteFile(prompt, []byte("no run facts here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"agent-run", "--payload", filepath.Join(dir, "missing", "launch.json")},
		{"local", "--prompt-file", prompt},
		{"local", "--prompt-file", filepath.Join(dir, "missing.md")},
		{"local", "--no-such-flag"},
		{"local", "--help"},
		{"local-worker", "--prompt-file", filepath.Join(dir, "missing.md")},
		{"local-worker", "-h"},
	} {
		if _, ok := runInternal(context.Background(), args); !ok {
			t.Errorf("%q went through the command tree", args)
			continue
		}
		fast, fastOut := stdoutOf(t, func() int { return run(context.Background(), args) })
		slow, slowOut := stdoutOf(t, func() int { return runCommand(context.Background(), args) })
		if fast != slow || fastOut != slowOut {
			t.Errorf("%q: exit %d with %q, through the command tree exit %d with %q", args, fast, fastOut, slow, slowOut)
		}
	}
}

func TestAgentRunHelpAndOtherFormsStillGoThroughTheCommandTree(t *testing.T) {
	for _, args := range [][]string{
		{"agent-run", "--help"},
		{"agent-run", "-h"},
		{"agent-run"},
		{"agent-run", "--payload"},
		{"agent-run", "--payload", ""},
		{"agent-run", "--payload", "--help"},
		{"agent-run", "--payload=x/launch.json"},
		{"agent-run", "--payload", "x/launch.json", "extra"},
		{"--lane", "main", "agent-run", "--payload", "x/launch.json"},
		{"version"},
		{},
	} {
		if _, ok := runInternal(context.Background(), args); ok {
			t.Errorf("%q skipped the command tree", args)
		}
	}
	code, out := stdoutOf(t, func() int { return run(context.Background(), []string{"agent-run", "--help"}) })
	if code != 0 || !strings.Contains(out, "--payload") || !strings.Contains(out, "Examples:") {
		t.Errorf("agent-run --help: exit %d, output:\n%s", code, out)
	}
	if code := run(context.Background(), []string{"agent-run"}); code != exitcode.Usage {
		t.Errorf("agent-run without --payload: exit %d, want 2 (usage)", code)
	}
}
