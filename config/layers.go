package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/sagikazarmark/locafero"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Layering. viper finds the config file and decides, key by key, which
// source wins: a flag the user set, else a WAVE_* variable, else the file,
// else the built-in default. What viper holds are markers naming the
// source, not values; the values live in the Config struct, because viper
// cannot be the decoder of record for what we promise (each point is
// pinned by a test in viper_limits_test.go):
//
//   - it lower-cases every key: a typo is kept as a new key, not reported,
//     and case-sensitive map keys (executors.claude.env.IS_SANDBOX, lane
//     names) change; our checker (schema.go) walks the YAML nodes against
//     the Go types and reports unknown keys and duplicate keys at any
//     depth with file:line;
//   - a YAML null falls through to the default, so a threshold could not
//     be disabled; an empty section (`ops: {}`) vanishes;
//   - its environment layer calls os.LookupEnv itself, so tests could not
//     hand Load an environment; and its key replacer sees the key already
//     lower-cased, so runtime.heartbeatIntervalMs would be
//     WAVE_RUNTIME_HEARTBEATINTERVALMS rather than the documented
//     WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS (env.go keeps the names);
//   - GetInt("abc") is 0 and its decoder's errors name neither the
//     variable nor the file line; setValue's are typed and named.
//
// So the file is decoded by our decoder, registered as viper's decoder for
// the three formats, which hands viper's config layer a marker for each
// settable key the file sets; the WAVE_* values Load is handed are merged
// over those markers (MergeConfigMap: env beats file); bound flags are
// viper's pflag layer, above both; defaults are its default layer. A new
// settable key needs nothing here: every key of envVars takes part.

// Flag binds a command-line flag to the config key it sets, so that a flag
// the user gives beats WAVE_* and the file through the same precedence.
// Key is a key settable from the environment (see envVars).
type Flag struct {
	Key  string // runtime.timeoutMinutes
	Flag *pflag.Flag
}

// The markers viper holds; Get returns the winner's. A bound flag's value
// is the one thing that is not a marker: viper returns it typed.
type (
	fromDefault struct{}
	fromFile    struct{}
	fromEnv     struct{ name, raw string }
)

// fileNames are the names the finder looks for, in order: the first that
// exists wins, so a repo migrating from the reference can keep its
// wave.config.json next to a new wave.config.yaml. (viper's own search
// tries .json before .yaml, hence our finder.)
var fileNames = []string{"wave.config.yaml", "wave.config.yml", "wave.config.json"}

// readFile finds <repoRoot>/wave.config.* with viper and decodes it over c
// with our decoder (registered as viper's decoder for the three formats).
// No file is not an error: c keeps its defaults.
func (c *Config) readFile(repoRoot string) (*viper.Viper, error) {
	var v *viper.Viper
	v = viper.NewWithOptions(
		viper.WithFinder(locafero.Finder{Paths: []string{repoRoot}, Names: fileNames,
			// Any type: a directory named wave.config.yaml is an error
			// when read, not silently skipped.
			Type: locafero.FileTypeAny}),
		viper.WithDecoderRegistry(fileDecoders{c: c, path: func() string { return v.ConfigFileUsed() }}),
	)
	err := v.ReadInConfig()
	var notFound viper.ConfigFileNotFoundError
	var parse viper.ConfigParseError
	switch {
	case err == nil, errors.As(err, &notFound):
		return v, nil
	case errors.As(err, &parse):
		return nil, parse.Unwrap() // our *Error list, with lines
	case v.ConfigFileUsed() == "":
		return nil, fmt.Errorf("find config in %s: %w", repoRoot, err)
	}
	return nil, fmt.Errorf("read config %s: %w", v.ConfigFileUsed(), err)
}

// fileDecoders is viper's decoder registry for our formats.
type fileDecoders struct {
	c    *Config
	path func() string
}

func (d fileDecoders) Decoder(format string) (viper.Decoder, error) {
	switch format {
	case "yaml", "yml", "json":
		return fileDecoder(d), nil
	}
	return nil, fmt.Errorf("config format %q is not supported (want yaml or json)", format)
}

// fileDecoder decodes the file over the Config and gives viper, for its
// config layer, a marker for each settable key the file sets.
type fileDecoder fileDecoders

func (d fileDecoder) Decode(data []byte, layer map[string]any) error {
	if err := decode(data, d.path(), d.c); err != nil {
		return err
	}
	for _, ev := range envVars() {
		if _, ok := d.c.src.lines[ev.Key]; ok {
			nest(layer, ev.Key, fromFile{})
		}
	}
	return nil
}

// override asks v for the winner of every settable key and applies the
// winners that are not already in c (a bound flag, a WAVE_* variable).
func (c *Config) override(v *viper.Viper, env func(string) (string, bool), flags []Flag) error {
	vars := envVars()
	for _, ev := range vars {
		v.SetDefault(ev.Key, fromDefault{})
	}
	flagName, err := bindFlags(v, vars, flags)
	if err != nil {
		return err
	}
	if err := v.MergeConfigMap(envLayer(vars, env)); err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	var errs []error
	root := reflect.ValueOf(c).Elem()
	for _, ev := range vars {
		field := root.FieldByIndex(ev.index)
		switch x := v.Get(ev.Key).(type) {
		case fromDefault, fromFile, nil:
			// Already in c: decoded from the file over the defaults.
		case fromEnv:
			if err := setValue(field, x.raw); err != nil {
				errs = append(errs, &Error{Env: x.name, Key: ev.Key, Msg: err.Error()})
				continue
			}
			c.src.set(&c.src.env, ev.Key, x.name)
		default:
			if err := setAny(field, x); err != nil {
				errs = append(errs, &Error{Flag: flagName[ev.Key], Key: ev.Key, Msg: err.Error()})
				continue
			}
			c.src.set(&c.src.flag, ev.Key, flagName[ev.Key])
		}
	}
	return errors.Join(errs...)
}

// bindFlags makes flags viper's pflag layer and returns key → "--name".
func bindFlags(v *viper.Viper, vars []envVar, flags []Flag) (map[string]string, error) {
	names := map[string]string{}
	for _, f := range flags {
		if !slices.ContainsFunc(vars, func(ev envVar) bool { return ev.Key == f.Key }) {
			return nil, fmt.Errorf("flag --%s: %q is not a setting a flag can bind", f.Flag.Name, f.Key)
		}
		if err := v.BindPFlag(f.Key, f.Flag); err != nil {
			return nil, fmt.Errorf("flag --%s: %w", f.Flag.Name, err)
		}
		names[f.Key] = "--" + f.Flag.Name
	}
	return names, nil
}

// envLayer is the WAVE_* variables env reports, as markers by key path:
// the environment we are handed, where viper's env layer would read the
// process's own.
func envLayer(vars []envVar, env func(string) (string, bool)) map[string]any {
	layer := map[string]any{}
	if env == nil {
		return layer
	}
	for _, ev := range vars {
		if raw, ok := env(ev.Name); ok {
			nest(layer, ev.Key, fromEnv{name: ev.Name, raw: raw})
		}
	}
	return layer
}

// setAny sets a flag's value as viper returns it (typed by the flag's
// type) through the same parsing as an environment value; a list flag
// gives its items, not its printed form.
func setAny(v reflect.Value, x any) error {
	if s, ok := x.([]string); ok && v.Kind() == reflect.Slice {
		v.Set(reflect.ValueOf(slices.Clone(s)))
		return nil
	}
	return setValue(v, fmt.Sprint(x))
}

// nest sets m[a][b]...[z] = val for key "a.b....z".
func nest(m map[string]any, key string, val any) {
	for {
		head, rest, more := strings.Cut(key, ".")
		if !more {
			m[head] = val
			return
		}
		sub, ok := m[head].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[head] = sub
		}
		m, key = sub, rest
	}
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
