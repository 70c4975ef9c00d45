package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Layering: key by key, a flag the user set wins, else a WAVE_* variable,
// else the file, else the built-in default. The file is decoded over the
// defaults by our own decoder (schema.go checks it against the Go types,
// reporting unknown keys at any depth with file:line, keeping the case of
// map keys and a YAML null that disables a threshold); then, for every
// settable key (envVars), a set flag or a variable the environment we are
// handed reports overrides it, parsed with errors that name the variable
// or flag. (This once went through viper, holding markers for the sources;
// it decided nothing a four-way precedence needs and cost every command
// 2–3 ms of start-up. Viper also could not be the decoder of record: it
// lower-cases keys and drops nulls.)

// Flag binds a command-line flag to the config key it sets, so that a flag
// the user gives beats WAVE_* and the file through the same precedence.
// Key is a key settable from the environment (see envVars).
type Flag struct {
	Key  string // runtime.timeoutMinutes
	Flag *pflag.Flag
}

// fileNames are the names looked for, in order: the first that exists
// wins, so a repo migrating from the reference can keep its
// wave.config.json next to a new wave.config.yaml.
var fileNames = []string{"wave.config.yaml", "wave.config.yml", "wave.config.json"}

// readFile decodes the first <repoRoot>/wave.config.* that exists over c.
// No file is not an error: c keeps its defaults. Anything by that name
// that is not a readable file (a directory, say) is an error, not skipped.
func (c *Config) readFile(repoRoot string) error {
	for _, name := range fileNames {
		path := filepath.Join(repoRoot, name)
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return fmt.Errorf("find config in %s: %w", repoRoot, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read config %s: %w", path, err)
		}
		return decode(data, path, c) // our *Error list, with lines
	}
	return nil
}

// override applies, for every settable key, the flag the user set or else
// the WAVE_* variable env reports; the file's value or the default stays
// otherwise (already in c).
func (c *Config) override(env func(string) (string, bool), flags []Flag) error {
	vars := envVars()
	bound, err := boundFlags(vars, flags)
	if err != nil {
		return err
	}
	var errs []error
	root := reflect.ValueOf(c).Elem()
	for _, ev := range vars {
		field := root.FieldByIndex(ev.index)
		if f := bound[ev.Key]; f != nil && f.Changed {
			if err := setFlag(field, f); err != nil {
				errs = append(errs, &Error{Flag: "--" + f.Name, Key: ev.Key, Msg: err.Error()})
				continue
			}
			c.src.set(&c.src.flag, ev.Key, "--"+f.Name)
			continue
		}
		if env == nil {
			continue
		}
		if raw, ok := env(ev.Name); ok {
			if err := setValue(field, raw); err != nil {
				errs = append(errs, &Error{Env: ev.Name, Key: ev.Key, Msg: err.Error()})
				continue
			}
			c.src.set(&c.src.env, ev.Key, ev.Name)
		}
	}
	return errors.Join(errs...)
}

// boundFlags returns key → flag, refusing a flag bound to a key no
// variable sets.
func boundFlags(vars []envVar, flags []Flag) (map[string]*pflag.Flag, error) {
	bound := map[string]*pflag.Flag{}
	for _, f := range flags {
		if !slices.ContainsFunc(vars, func(ev envVar) bool { return ev.Key == f.Key }) {
			return nil, fmt.Errorf("flag --%s: %q is not a setting a flag can bind", f.Flag.Name, f.Key)
		}
		bound[f.Key] = f.Flag
	}
	return bound, nil
}

// setFlag sets a flag's value through the same parsing as an environment
// value; a list flag gives its items, not its printed form.
func setFlag(v reflect.Value, f *pflag.Flag) error {
	if sv, ok := f.Value.(pflag.SliceValue); ok && v.Kind() == reflect.Slice {
		v.Set(reflect.ValueOf(slices.Clone(sv.GetSlice())))
		return nil
	}
	return setValue(v, f.Value.String())
}

// maskLanes removes from every lane section the keys a WAVE_* variable or
// a flag set. Those are settings of this invocation, whichever lane it
// runs, so they beat a lane's own file setting as they beat the file's top
// level: flag > env > lanes.<lane> > top level > default. A top-level
// paths.plansDir or wavesDir is the default lane's only, so it masks only
// that lane's.
func (c *Config) maskLanes() error {
	var keys []string
	for _, m := range []map[string]string{c.src.env, c.src.flag} {
		for k := range m {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	for name, lc := range c.Lanes {
		if lc.raw == nil {
			continue
		}
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(lc.raw))
		dec.UseNumber() // re-encode numbers exactly
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("lanes.%s: %w", name, err)
		}
		masked := false
		for _, k := range keys {
			for _, lk := range laneForms(k, name == c.DefaultLane) {
				masked = unset(m, lk) || masked
			}
		}
		if !masked {
			continue
		}
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("lanes.%s: %w", name, err)
		}
		var out LaneConfig
		if err := json.Unmarshal(b, &out); err != nil {
			return fmt.Errorf("lanes.%s: %w", name, err)
		}
		c.Lanes[name] = out
	}
	return nil
}

// laneForms are the keys of a lane section that set top-level key k:
// the same path, and for paths.* and runtimePolicy.* also the flat form
// the reference allows directly under lanes.<lane>.
func laneForms(k string, defaultLane bool) []string {
	section, leaf, nested := strings.Cut(k, ".")
	switch {
	case !nested:
		return []string{k}
	case k == "paths.plansDir" || k == "paths.wavesDir":
		if !defaultLane {
			return nil
		}
		return []string{k, leaf}
	case section == "paths" || section == "runtimePolicy":
		return []string{k, leaf}
	}
	return []string{k}
}

// unset deletes key "a.b.c" from nested maps, reporting whether it was there.
func unset(m map[string]any, key string) bool {
	head, rest, more := strings.Cut(key, ".")
	if !more {
		_, ok := m[head]
		delete(m, head)
		return ok
	}
	sub, ok := m[head].(map[string]any)
	return ok && unset(sub, rest)
}
