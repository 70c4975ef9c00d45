package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"
)

// These tests pin the viper behaviours that keep our own code in the
// loop (layers.go says which code each one keeps). If one fails after a
// viper upgrade, that piece of ours may be replaceable: revisit it.

func viperWith(t *testing.T, name, body string) *viper.Viper {
	t.Helper()
	dir := repoWith(t, map[string]string{name: body})
	v := viper.New()
	v.SetConfigFile(filepath.Join(dir, name))
	if err := v.ReadInConfig(); err != nil {
		t.Fatal(err)
	}
	return v
}

// Why our finder: viper's own search prefers .json over .yaml.
func TestViperLimitSearchesJSONFirst(t *testing.T) {
	dir := repoWith(t, map[string]string{"wave.config.yaml": "{}\n", "wave.config.json": "{}"})
	v := viper.New()
	v.SetConfigName("wave.config")
	v.AddConfigPath(dir)
	if err := v.ReadInConfig(); err != nil {
		t.Fatal(err)
	}
	if got := filepath.Base(v.ConfigFileUsed()); got != "wave.config.json" {
		t.Errorf("viper's search picked %s", got)
	}
}

// Why our decoder: viper lower-cases every key, so a typo is just another
// key (Unmarshal reports nothing), a case-sensitive map key changes, and
// there is no line to point at.
func TestViperLimitLowercasesKeysAndKeepsTypos(t *testing.T) {
	v := viperWith(t, "wave.config.yaml", "executors:\n  defualt: claude\n  claude:\n    env:\n      IS_SANDBOX: \"1\"\n")
	var out struct {
		Executors struct {
			Default string
			Claude  struct{ Env map[string]string }
		}
	}
	if err := v.Unmarshal(&out); err != nil {
		t.Errorf("Unmarshal reported %v", err)
	}
	if _, ok := out.Executors.Claude.Env["is_sandbox"]; !ok || out.Executors.Default != "" {
		t.Errorf("env map %v, default %q", out.Executors.Claude.Env, out.Executors.Default)
	}
}

// Why the values stay in our struct: a YAML null falls through to the
// default (a threshold could not be disabled), and an empty section,
// which declares a lane, is gone.
func TestViperLimitNullAndEmptySections(t *testing.T) {
	v := viperWith(t, "wave.config.yaml", "validation:\n  requireExitContractsFromWave: null\nlanes:\n  ops: {}\n")
	v.SetDefault("validation.requireExitContractsFromWave", 6)
	if got := v.Get("validation.requireExitContractsFromWave"); got != 6 {
		t.Errorf("null gave %v", got)
	}
	var out struct{ Lanes map[string]any }
	if err := v.Unmarshal(&out); err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Lanes["ops"]; ok {
		t.Error("the empty lane section survived Unmarshal")
	}
}

// Why env.go keeps the names, the typed parse and the injected lookup:
// viper's env layer reads the process environment itself, its key
// replacer sees the key lower-cased (no camelCase word boundaries), and
// GetInt turns a bad value into 0.
func TestViperLimitEnvLayer(t *testing.T) {
	v := viper.New()
	v.SetEnvPrefix("WAVE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	t.Setenv("WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS", "7")
	if got := v.Get("runtime.heartbeatIntervalMs"); got != nil {
		t.Errorf("the documented name was read: %v", got)
	}
	t.Setenv("WAVE_RUNTIME_HEARTBEATINTERVALMS", "abc")
	if got, n := v.Get("runtime.heartbeatIntervalMs"), v.GetInt("runtime.heartbeatIntervalMs"); got != "abc" || n != 0 {
		t.Errorf("Get = %v, GetInt = %d", got, n)
	}
}
