package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wave-orchestrator/wave-orchestrator/internal/suggest"
)

// walk visits c and every command under it, hidden ones included.
func walk(c *cobra.Command, visit func(*cobra.Command)) {
	visit(c)
	for _, sub := range c.Commands() {
		walk(sub, visit)
	}
}

// refuseMistypes makes every command of the tree answer a word it does
// not know the same way, whatever its depth: an unknown subcommand, a
// wrong number of arguments or an unknown flag is a usage error (exit 2)
// that names what exists and the likeliest meant word. Cobra alone does
// so only at the top: a group such as `signal` printed its help and
// exited 0 for `signal prooof`, so an agent that mistyped a marker was
// told it had printed one.
func refuseMistypes(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	walk(root, func(c *cobra.Command) {
		if c.HasSubCommands() {
			refuseUnknownSubcommands(c)
			return
		}
		if check := c.Args; check != nil {
			c.Args = func(c *cobra.Command, args []string) error {
				if err := check(c, args); err != nil {
					return usageError{err}
				}
				return nil
			}
		}
	})
}

// refuseUnknownSubcommands makes a group command (one with
// subcommands) refuse any argument: an argument there is a subcommand
// the group does not have. Without arguments a group that does nothing
// itself prints its help, as before.
func refuseUnknownSubcommands(c *cobra.Command) {
	own := c.Args
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownSubcommand(c, args[0])
		}
		if own != nil {
			if err := own(c, args); err != nil {
				return usageError{err}
			}
		}
		return nil
	}
	if !c.Runnable() {
		c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	}
}

// unknownSubcommand is the error for word under group c: the commands
// it is the start of, else the nearest by edit distance, else the list of
// what exists.
func unknownSubcommand(c *cobra.Command, word string) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	var did []string
	for _, n := range names {
		if word != "" && strings.HasPrefix(n, strings.ToLower(word)) {
			did = append(did, n) // cut short: "stat"
		}
	}
	if s := suggest.Closest(word, names); len(did) == 0 && s != "" {
		did = []string{s}
	}
	msg := fmt.Sprintf("unknown command %q for %q", word, c.CommandPath())
	if len(did) > 0 {
		for i, d := range did {
			did[i] = fmt.Sprintf("%q", d)
		}
		return usageError{fmt.Errorf("%s; did you mean %s? (%s --help lists its commands)", msg, orList(did), c.CommandPath())}
	}
	return usageError{fmt.Errorf("%s; its commands are %s", msg, strings.Join(names, ", "))}
}

// orList is "a", "a or b", "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// flagHintKey is the command annotation holding the hint for a flag the
// command does not have but users reach for (flagHint).
const flagHintKey = "wave-orchestrator/unknown-flag-hint:"

// flagHint gives c's "unknown flag --name" error hint, for a flag users
// bring from another command (launch --wave, where resume's is meant).
func flagHint(c *cobra.Command, name, hint string) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[flagHintKey+name] = hint
}

// flagError makes every flag error a usage error, and an unknown long
// flag's error name the flag meant: the command's own hint for it, else
// the nearest flag by edit distance, else the flags that have the given
// name as one of their words (--wave: --start-wave, --end-wave).
func flagError(c *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) || !strings.HasPrefix(err.Error(), "unknown flag: --") {
		return usageError{err}
	}
	name := ne.GetSpecifiedName()
	if hint, ok := c.Annotations[flagHintKey+name]; ok {
		return usageError{fmt.Errorf("%w; %s", err, hint)}
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	did := []string{}
	if s := suggest.Closest(name, names); s != "" {
		did = append(did, "--"+s)
	} else {
		for _, n := range names {
			if slices.Contains(strings.Split(n, "-"), name) {
				did = append(did, "--"+n)
			}
		}
	}
	if len(did) == 0 {
		return usageError{fmt.Errorf("%w (%s --help lists its flags)", err, c.CommandPath())}
	}
	return usageError{fmt.Errorf("%w; did you mean %s?", err, orList(did))}
}
