package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
)

// waveFlag is an optional wave number kept in an int where -1 means "not
// given". Its String is empty while unset, so help never shows the
// sentinel as a default, and a negative value is refused when parsed.
type waveFlag struct{ p *int }

func (f waveFlag) String() string {
	if f.p == nil || *f.p < 0 {
		return ""
	}
	return strconv.Itoa(*f.p)
}

func (f waveFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a wave number (0 or more), got %q", s)
	}
	*f.p = n
	return nil
}

func (f waveFlag) Type() string { return "N" }

// waveVar defines an optional wave-number flag on c, bound to p, whose
// initial value (usually -1: unset) is def.
func waveVar(c *cobra.Command, p *int, name, short string, def int, usage string) {
	*p = def
	c.Flags().VarP(waveFlag{p}, name, short, usage)
	_ = c.RegisterFlagCompletionFunc(name, completeWaves)
}
