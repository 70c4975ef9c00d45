package main

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/spf13/cobra"
)

// Every subcommand is in the order list once, so the whole tree (help,
// completion) has them all.
func TestTheWholeTreeHasEverySubcommand(t *testing.T) {
	names := slices.Sorted(maps.Keys(subcommands(&globals{})))
	order := slices.Sorted(slices.Values(commandOrder))
	if !slices.Equal(names, order) {
		t.Fatalf("commandOrder %v, subcommands %v: each must name every command once", order, names)
	}
	var built []string
	for _, c := range newRootCmd().Commands() {
		built = append(built, c.Name())
	}
	for _, n := range names {
		if !slices.Contains(built, n) {
			t.Errorf("the whole tree lacks %s", n)
		}
	}
}

// A command built alone for its own command line says and does what it
// does in the whole tree: its help (every subcommand below it too) is the
// same text, and a misspelt command still gets the whole tree's
// suggestion.
func TestACommandBuiltAloneIsTheSameCommand(t *testing.T) {
	help := func(root *cobra.Command, path []string) string {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatalf("%v: %v", path, err)
		}
		var out bytes.Buffer
		c.SetOut(&out)
		if err := c.Help(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for _, name := range commandOrder {
		whole := newRootCmd()
		alone := newRootCmd(name, "--help")
		if n := len(alone.Commands()); n != 1 {
			t.Fatalf("%s: the root built for it has %d commands, want 1", name, n)
		}
		c, _, _ := whole.Find([]string{name})
		walk(c, func(sub *cobra.Command) {
			path := append([]string{name}, pathBelow(sub, c)...)
			if a, w := help(alone, path), help(whole, path); a != w {
				t.Errorf("%v --help built alone:\n%s\nin the whole tree:\n%s", path, a, w)
			}
		})
	}
	for _, args := range [][]string{{"stauts"}, {"--lane", "main", "status"}, {"help", "status"}, {"completion", "bash"}, {"__complete", "st"}, {}} {
		if n := len(newRootCmd(args...).Commands()); n < len(commandOrder) {
			t.Errorf("%q: built %d commands, want the whole tree", args, n)
		}
	}
}

// pathBelow is the names from under top down to c.
func pathBelow(c, top *cobra.Command) []string {
	var p []string
	for ; c != nil && c != top; c = c.Parent() {
		p = append([]string{c.Name()}, p...)
	}
	return p
}
