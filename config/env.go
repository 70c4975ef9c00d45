package config

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// envVar binds one scalar config key to its WAVE_* variable, named at
// the key's camelCase word boundaries. The same table is the set of keys
// a flag can bind.
type envVar struct {
	Name  string // WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS
	Key   string // runtime.heartbeatIntervalMs
	index []int  // field index path from Config
}

// envVars lists every key settable from the environment. The name is
// WAVE_ followed by the key's path in upper snake case, camelCase split
// at each capital:
//
//	defaultLane                      WAVE_DEFAULT_LANE
//	runtime.heartbeatIntervalMs      WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS
//	executors.default                WAVE_EXECUTORS_DEFAULT
//	executors.claude.permissionMode  WAVE_EXECUTORS_CLAUDE_PERMISSION_MODE
//	validation.requireExitContractsFromWave
//	                                 WAVE_VALIDATION_REQUIRE_EXIT_CONTRACTS_FROM_WAVE
//	github.tokenEnv                  WAVE_GITHUB_TOKEN_ENV
//
// Only scalars and string lists are covered (lists are comma-separated);
// lanes, profiles and other maps are file-only. An optional threshold
// set to "null" is disabled.
func envVars() []envVar { return envTable() }

// envTable is computed once: it depends only on the Config type, and
// every Load walks it (reflection over the whole type, ~0.3 ms). Callers
// only read it.
var envTable = sync.OnceValue(buildEnvVars)

func buildEnvVars() []envVar {
	var out []envVar
	var walk func(t reflect.Type, key string, index []int)
	walk = func(t reflect.Type, key string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			idx := append(append([]int(nil), index...), i)
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, key, idx)
				continue
			}
			if !f.IsExported() || name == "-" || name == "" {
				continue
			}
			k := join(key, name)
			ft := f.Type
			switch {
			case ft.Kind() == reflect.Struct:
				walk(ft, k, idx)
			case envSettable(ft):
				out = append(out, envVar{Name: "WAVE_" + upperSnake(k), Key: k, index: idx})
			}
		}
	}
	walk(reflect.TypeFor[Config](), "", nil)
	return out
}

func envSettable(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String, reflect.Int, reflect.Bool:
		return true
	case reflect.Slice:
		return t.Elem().Kind() == reflect.String
	}
	return false
}

// upperSnake turns "runtime.heartbeatIntervalMs" into
// "RUNTIME_HEARTBEAT_INTERVAL_MS".
func upperSnake(key string) string {
	var b strings.Builder
	rs := []rune(key)
	for i, r := range rs {
		switch {
		case r == '.':
			b.WriteByte('_')
			continue
		case unicode.IsUpper(r) && i > 0 && rs[i-1] != '.' &&
			(!unicode.IsUpper(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))):
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// EnvName is the WAVE_* variable that sets key, if the environment can set
// it (for help texts that name it).
//
// It follows key through the Config type instead of listing every
// variable: each command line binds dozens of flags at start, and listing
// them all for each was most of a command's start-up time.
func EnvName(key string) (string, bool) {
	t := reflect.TypeFor[Config]()
	parts := strings.Split(key, ".")
	for i, part := range parts {
		f, ok := fieldNamed(t, part)
		if !ok {
			return "", false
		}
		t = f.Type
		if i < len(parts)-1 && t.Kind() != reflect.Struct {
			return "", false
		}
	}
	if t.Kind() == reflect.Struct || !envSettable(t) {
		return "", false
	}
	return "WAVE_" + upperSnake(key), true
}

// fieldNamed is t's exported field whose json name is name, looking
// through embedded structs as envVars does.
func fieldNamed(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		json, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && json == "" && f.Type.Kind() == reflect.Struct {
			if g, ok := fieldNamed(f.Type, name); ok {
				return g, true
			}
			continue
		}
		if f.IsExported() && json == name && name != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// setValue parses raw (from the environment, or a flag's value) into v
// with errors that say what was wanted (never "abc" read as 0).
func setValue(v reflect.Value, raw string) error {
	raw = strings.TrimSpace(raw)
	if v.Kind() == reflect.Pointer {
		if raw == "null" {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := setValue(p.Elem(), raw); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(raw)
	case reflect.Int:
		n, err := strconv.Atoi(raw)
		if err != nil {
			return errors.New("want an integer, got " + strconv.Quote(raw))
		}
		v.SetInt(int64(n))
	case reflect.Bool:
		b, ok := parseBool(raw)
		if !ok {
			return errors.New("want true or false, got " + strconv.Quote(raw))
		}
		v.SetBool(b)
	case reflect.Slice:
		v.Set(reflect.ValueOf(splitCSV(raw)))
	}
	return nil
}
