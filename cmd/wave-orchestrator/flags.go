package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wave-orchestrator/wave-orchestrator/config"
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

// configKey is the flag annotation naming the config key a flag sets.
const configKey = "wave-orchestrator/config-key"

// bindConfig makes flag name of c set config key: config.Load binds it as
// viper's flag layer, so the flag, when given, beats the key's WAVE_*
// variable, the file and any lane section. The help names key and variable.
func bindConfig(c *cobra.Command, name, key string) {
	f := c.Flags().Lookup(name)
	env, ok := config.EnvName(key)
	if f == nil || !ok {
		panic(fmt.Sprintf("bindConfig(--%s, %s): no such flag or settable key", name, key))
	}
	f.Usage += fmt.Sprintf(" [config %s, $%s]", key, env)
	_ = c.Flags().SetAnnotation(name, configKey, []string{key})
}

// configFlags lists the flags of fs bound to config keys.
func configFlags(fs *pflag.FlagSet) []config.Flag {
	var out []config.Flag
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if k := f.Annotations[configKey]; len(k) == 1 {
			out = append(out, config.Flag{Key: k[0], Flag: f})
		}
	})
	return out
}
