package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// layerCase is one key set in up to three sources; each test run keeps a
// subset of them and expects the highest present to win.
type layerCase struct {
	name string
	key  string // the config key the env variable and flag set
	// file is YAML that sets the key (and may set it in a lane too).
	file     string
	env      string // value of the key's WAVE_* variable
	flagType string // int | string | stringArray
	flag     []string
	get      func(c *Config, l *Lane) any
	// want per winning source.
	def, fromFile, fromEnv, fromFlag any
	// jsonIgnored: a reference wave.config.json's value is not ours
	// (its stateRoot), so from JSON the file layer yields the default.
	jsonIgnored bool
}

var layerCases = []layerCase{
	{
		name: "nested int", key: "runtime.timeoutMinutes",
		file: "runtime:\n  timeoutMinutes: 30\n", env: "45", flagType: "int", flag: []string{"60"},
		get: func(c *Config, _ *Lane) any { return c.Runtime.TimeoutMinutes },
		def: 240, fromFile: 30, fromEnv: 45, fromFlag: 60,
	},
	{
		name: "backlog int", key: "backlog.width",
		file: "backlog:\n  width: 2\n", env: "3", flagType: "int", flag: []string{"4"},
		get: func(c *Config, _ *Lane) any { return c.Backlog.Width },
		def: 0, fromFile: 2, fromEnv: 3, fromFlag: 4,
	},
	{
		name: "list", key: "backlog.labels",
		file: "backlog:\n  labels: [from-file]\n", env: "env-a, env-b", flagType: "stringArray", flag: []string{"flag,with-comma", "flag-b"},
		get: func(c *Config, _ *Lane) any { return c.Backlog.Labels },
		def: []string(nil), fromFile: []string{"from-file"}, fromEnv: []string{"env-a", "env-b"}, fromFlag: []string{"flag,with-comma", "flag-b"},
	},
	{
		name: "three deep", key: "executors.claude.permissionMode",
		file: "executors:\n  claude:\n    permissionMode: plan\n", env: "acceptEdits", flagType: "string", flag: []string{"default"},
		get: func(_ *Config, l *Lane) any { return deref(l.Executors.Claude.PermissionMode) },
		def: "bypassPermissions", fromFile: "plan", fromEnv: "acceptEdits", fromFlag: "default",
	},
	{
		// The file disables the threshold with null; env and flag set it.
		name: "nullable threshold", key: "validation.requireExitContractsFromWave",
		file: "validation:\n  requireExitContractsFromWave: null\n", env: "2", flagType: "string", flag: []string{"3"},
		get: func(_ *Config, l *Lane) any { return deref(l.Validation.RequireExitContractsFromWave) },
		def: 6, fromFile: nil, fromEnv: 2, fromFlag: 3,
	},
	{
		// Lane-scoped: the file sets the key at the top level and in lane
		// ops; ops sees its own value over the top level, and env and flag
		// over both.
		name: "lane section", key: "executors.default",
		file: "executors:\n  default: claude\nlanes:\n  ops:\n    executors:\n      default: opencode\n", env: "local", flagType: "string", flag: []string{"shell"},
		get: func(_ *Config, l *Lane) any { return l.Executors.Default },
		def: "codex", fromFile: "opencode", fromEnv: "local", fromFlag: "shell",
	},
	{
		name: "lane flat path", key: "paths.stateRoot",
		file: "paths:\n  stateRoot: .top\nlanes:\n  ops:\n    stateRoot: .ops-state\n", env: ".env-state", flagType: "string", flag: []string{".flag-state"},
		get: func(_ *Config, l *Lane) any { return l.StateRoot },
		def: ".wave", fromFile: ".ops-state", fromEnv: ".env-state", fromFlag: ".flag-state", jsonIgnored: true,
	},
	{
		name: "lane role", key: "roles.integrationAgentId",
		file: "lanes:\n  ops:\n    roles:\n      integrationAgentId: I8\n", env: "E8", flagType: "string", flag: []string{"F8"},
		get: func(_ *Config, l *Lane) any { return l.Roles.IntegrationAgentID },
		def: "A8", fromFile: "I8", fromEnv: "E8", fromFlag: "F8",
	},
}

// flagFor defines a flag of tc's type and parses tc's values into it.
func flagFor(t *testing.T, tc layerCase, given bool) Flag {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	switch tc.flagType {
	case "int":
		fs.Int("x", 0, "")
	case "string":
		fs.String("x", "", "")
	case "stringArray":
		fs.StringArray("x", nil, "")
	}
	var args []string
	if given {
		for _, v := range tc.flag {
			args = append(args, "--x="+v)
		}
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return Flag{Key: tc.key, Flag: fs.Lookup("x")}
}

// toJSON rewrites a YAML fixture as an indented wave.config.json.
func toJSON(t *testing.T, y string) string {
	t.Helper()
	var v any
	if err := yaml.Unmarshal([]byte(y), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPrecedenceFlagEnvFileDefault runs every key through every subset of
// {file, env, flag}, in both file formats: the highest source present
// wins (flag > env > file > default), also over a lane's own section, and
// KeyLine names that source.
func TestPrecedenceFlagEnvFileDefault(t *testing.T) {
	for _, tc := range layerCases {
		envName, ok := EnvName(tc.key)
		if !ok {
			t.Fatalf("%s: no env variable", tc.key)
		}
		for _, format := range []string{"wave.config.yaml", "wave.config.json"} {
			for set := range 8 {
				file, env, flag := set&1 != 0, set&2 != 0, set&4 != 0
				var srcs []string
				files := map[string]string{}
				if file {
					srcs = append(srcs, "file")
					files[format] = tc.file
					if format == "wave.config.json" {
						files[format] = toJSON(t, tc.file)
					}
				}
				vars := map[string]string{}
				if env {
					srcs = append(srcs, "env")
					vars[envName] = tc.env
				}
				if flag {
					srcs = append(srcs, "flag")
				}
				t.Run(tc.name+"/"+format+"/"+strings.Join(append(srcs, "default"), "+"), func(t *testing.T) {
					dir := repoWith(t, files)
					c, err := Load(dir, mapEnv(vars), flagFor(t, tc, flag))
					if err != nil {
						t.Fatalf("Load: %v", err)
					}
					l := mustLane(t, c, dir, "ops")
					want, origin := tc.def, ""
					switch {
					case flag:
						want, origin = tc.fromFlag, "flag --x"
					case env:
						want, origin = tc.fromEnv, "env "+envName
					case file && tc.jsonIgnored && format == "wave.config.json":
					case file:
						want, origin = tc.fromFile, format
					}
					if got := tc.get(c, l); !reflect.DeepEqual(got, want) {
						t.Errorf("%s = %#v, want %#v", tc.key, got, want)
					}
					if got := c.KeyLine(tc.key); origin != "" && !strings.Contains(got, origin) {
						t.Errorf("KeyLine(%s) = %q, want it to name %q", tc.key, got, origin)
					}
				})
			}
		}
	}
}

// Env and flags that set other keys leave the file's unknown keys, at any
// depth and in either format, reported with file:line.
func TestUnknownKeysStillFileLineWithEnvAndFlags(t *testing.T) {
	env := mapEnv(map[string]string{"WAVE_RUNTIME_TIMEOUT_MINUTES": "5", "WAVE_EXECUTORS_DEFAULT": "local"})
	fl := flagFor(t, layerCases[1], true)
	for name, tc := range map[string]struct{ body, want string }{
		"wave.config.yaml": {"runtime:\n  timeoutMinutes: 3\nlanes:\n  ops:\n    executors:\n      claude:\n        permisionMode: plan\n",
			"wave.config.yaml:7: lanes.ops.executors.claude.permisionMode: unknown key"},
		"wave.config.json": {"{\n  \"lanes\": {\n    \"ops\": {\n      \"validation\": {\"autoClosure\": {\"allowInferedIntegration\": true}}\n    }\n  }\n}\n",
			"wave.config.json:4: lanes.ops.validation.autoClosure.allowInferedIntegration: unknown key"},
	} {
		_, err := Load(repoWith(t, map[string]string{name: tc.body}), env, fl)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

func TestFlagErrorsNameTheFlag(t *testing.T) {
	dir := yamlRepo(t, "runtime:\n  timeoutMinutes: 30\n")
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.String("timeout", "", "")
	fs.Int("timeout-minutes", 0, "")
	if err := fs.Parse([]string{"--timeout=soon", "--timeout-minutes=0"}); err != nil {
		t.Fatal(err)
	}
	// A string flag bound to an int key fails like an env variable would.
	_, err := Load(dir, nil, Flag{Key: "runtime.timeoutMinutes", Flag: fs.Lookup("timeout")})
	if err == nil || !strings.Contains(err.Error(), `flag --timeout: runtime.timeoutMinutes: want an integer, got "soon"`) {
		t.Errorf("err = %v", err)
	}
	// A well-formed but invalid value is reported against the flag, not
	// the file line it overrode.
	_, err = Load(dir, nil, Flag{Key: "runtime.timeoutMinutes", Flag: fs.Lookup("timeout-minutes")})
	if err == nil || !strings.Contains(err.Error(), "flag --timeout-minutes: runtime.timeoutMinutes: must be >= 1, got 0") {
		t.Errorf("err = %v", err)
	}
	// A flag bound to a key no flag can set is refused.
	_, err = Load(dir, nil, Flag{Key: "lanes", Flag: fs.Lookup("timeout")})
	if err == nil || !strings.Contains(err.Error(), `"lanes" is not a setting a flag can bind`) {
		t.Errorf("err = %v", err)
	}
}

// A bad value from the environment for a key a lane also sets is the
// variable's error, not the lane line's.
func TestEnvOverLaneErrorNamesTheVariable(t *testing.T) {
	dir := yamlRepo(t, "lanes:\n  ops:\n    executors:\n      default: claude\n")
	_, err := Load(dir, mapEnv(map[string]string{"WAVE_EXECUTORS_DEFAULT": "gpt"}))
	if err == nil || !strings.Contains(err.Error(), `env WAVE_EXECUTORS_DEFAULT: executors.default: "gpt" is not one of`) ||
		strings.Contains(err.Error(), "wave.config.yaml:4") {
		t.Errorf("err = %v", err)
	}
}

// A top-level wavesDir is the default lane's: from the environment it
// beats the default lane's own wavesDir, and leaves other lanes' alone.
func TestEnvWavesDirIsTheDefaultLanes(t *testing.T) {
	dir := yamlRepo(t, "lanes:\n  main:\n    wavesDir: main-waves\n  ops:\n    wavesDir: ops-waves\n")
	c := mustLoad(t, dir, map[string]string{"WAVE_PATHS_WAVES_DIR": "env-waves"})
	if got := mustLane(t, c, dir, "main").WavesDir; got != "env-waves" {
		t.Errorf("main waves = %q, want env-waves", got)
	}
	if got := mustLane(t, c, dir, "ops").WavesDir; got != "ops-waves" {
		t.Errorf("ops waves = %q, want ops-waves", got)
	}
}

// Load reads the environment it is handed and nothing else: the process
// environment does not leak in.
func TestLoadReadsOnlyTheInjectedEnvironment(t *testing.T) {
	t.Setenv("WAVE_RUNTIME_TIMEOUT_MINUTES", "7")
	t.Setenv("WAVE_EXECUTORS_DEFAULT", "gpt") // invalid: would fail Load if read
	dir := t.TempDir()
	if c := mustLoad(t, dir, nil); c.Runtime.TimeoutMinutes != 240 {
		t.Errorf("nil env: timeoutMinutes = %d, want the default 240", c.Runtime.TimeoutMinutes)
	}
	if c := mustLoad(t, dir, map[string]string{"WAVE_RUNTIME_TIMEOUT_MINUTES": "9"}); c.Runtime.TimeoutMinutes != 9 {
		t.Errorf("injected env: timeoutMinutes = %d, want 9", c.Runtime.TimeoutMinutes)
	}
	// os.LookupEnv is an ordinary source.
	if c, err := Load(dir, os.LookupEnv); err == nil || c != nil {
		t.Errorf("os.LookupEnv with WAVE_EXECUTORS_DEFAULT=gpt: err = %v, want an error", err)
	}
}

// Every settable key has its own WAVE_* variable: two keys sharing a name
// would share one precedence slot.
func TestSettableKeysHaveDistinctVariables(t *testing.T) {
	seen := map[string]string{}
	for _, ev := range envVars() {
		if prev, ok := seen[ev.Name]; ok {
			t.Errorf("%s and %s are both set by %s", prev, ev.Key, ev.Name)
		}
		seen[ev.Name] = ev.Key
	}
}

func TestConfigFileFoundInOrder(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{"wave.config.yaml", "wave.config.yml", "wave.config.json"}, "wave.config.yaml"},
		{[]string{"wave.config.yml", "wave.config.json"}, "wave.config.yml"},
		{[]string{"wave.config.json"}, "wave.config.json"},
		{[]string{"wave.config.toml"}, ""},
	} {
		files := map[string]string{}
		for _, f := range tc.files {
			files[f] = "{}"
		}
		dir := repoWith(t, files)
		c := mustLoad(t, dir, nil)
		want := ""
		if tc.want != "" {
			want = filepath.Join(dir, tc.want)
		}
		if c.File != want {
			t.Errorf("%v: File = %q, want %q", tc.files, c.File, want)
		}
	}
}

// Every key a flag or variable sets must stay distinct once viper
// lower-cases it, or two keys would share one precedence slot.
func TestSettableKeysDistinctIgnoringCase(t *testing.T) {
	seen := map[string]string{}
	for _, ev := range envVars() {
		k := strings.ToLower(ev.Key)
		if prev, ok := seen[k]; ok {
			t.Errorf("%s and %s are the same key to viper", prev, ev.Key)
		}
		seen[k] = ev.Key
	}
}
