package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

func TestEveryCommandHasExamplesAndNoSentinelDefaults(t *testing.T) {
	root := newRootCmd()
	n := 0
	walk(root, func(c *cobra.Command) {
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no Examples section", c.CommandPath())
		}
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Help(); err != nil {
			t.Fatalf("%s --help: %v", c.CommandPath(), err)
		}
		help := out.String()
		if !strings.Contains(help, "Examples:") {
			t.Errorf("%s --help shows no examples:\n%s", c.CommandPath(), help)
		}
		for _, bad := range []string{"(default -1)", "(default -", `(default "")`} {
			if strings.Contains(help, bad) {
				t.Errorf("%s --help shows a sentinel default %s:\n%s", c.CommandPath(), bad, help)
			}
		}
	})
	if n < 14 {
		t.Fatalf("walked only %d commands", n)
	}
}

func TestWaveFlagsRefuseNegativeNumbers(t *testing.T) {
	for _, args := range [][]string{{"status", "-w", "-1"}, {"dashboard", "--wave", "x"}, {"resume", "-w", "-2"}} {
		if code := run(context.Background(), args); code != exitcode.Usage {
			t.Errorf("%v: exit %d, want %d", args, code, exitcode.Usage)
		}
	}
}

func TestShortFlagsAreConsistent(t *testing.T) {
	walk(newRootCmd(), func(c *cobra.Command) {
		for name, short := range map[string]string{"wave": "w", "agent": "a", "phase": "p", "lane": "l"} {
			if f := c.Flags().Lookup(name); f != nil && f.Shorthand != short {
				t.Errorf("%s --%s has shorthand %q, want -%s", c.CommandPath(), name, f.Shorthand, short)
			}
		}
		if f := c.Flags().Lookup("json"); f != nil && f.Value.Type() != "bool" {
			t.Errorf("%s --json is a %s, want a bool like everywhere else", c.CommandPath(), f.Value.Type())
		}
	})
}
