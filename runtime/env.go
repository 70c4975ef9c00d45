package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/otelenv"
	"github.com/wave-orchestrator/wave-orchestrator/internal/redact"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// RedactedValue stands in launch.json for a secret env value; the runner
// takes the real value from the run's env file (see writeEnvFile).
const RedactedValue = redact.Value

// launchEnv is a run's env file: the launching process's environment,
// which the agent starts from (the tmux server's own environment is
// whatever the launcher that started the server had), and the real values
// of the env entries redacted in launch.json. It is mode 0600 and the
// runner deletes it once read, so secrets rest on disk only until then.
type launchEnv struct {
	Environ []string          `json:"environ"`
	Secrets map[string]string `json:"secrets,omitempty"`
}

// writeEnvFile writes p's env file with environ minus TMUX and TMUX_PANE.
func writeEnvFile(p *Payload, environ []string) error {
	le := launchEnv{Secrets: map[string]string{}}
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); k != "TMUX" && k != "TMUX_PANE" {
			le.Environ = append(le.Environ, kv)
		}
	}
	red := Redacted(*p)
	for k, v := range p.Env {
		if red.Env[k] != v {
			le.Secrets[k] = v
		}
	}
	// WriteVolatile creates the file with os.CreateTemp, mode 0600.
	return jsonfile.WriteVolatile(filepath.Join(p.RunDir, envFile), le)
}

// takeEnv reads and deletes p's env file, restores the secrets it holds
// into p.Env, and returns the environment the agent starts from. Without
// an env file (a run started by an older launcher) that is the runner's
// own. Either way TERM is the runner's: the agent's output goes to the
// pane, not to the launcher's terminal.
func takeEnv(p *Payload, own []string) ([]string, error) {
	path := filepath.Join(p.RunDir, envFile)
	var le launchEnv
	err := readJSON(path, &le)
	if errors.Is(err, fs.ErrNotExist) {
		return own, nil
	}
	if err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil {
		return nil, fmt.Errorf("env file: %w", err)
	}
	for k, v := range le.Secrets {
		if p.Env[k] == RedactedValue {
			p.Env[k] = v
		}
	}
	env := le.Environ
	for _, kv := range own {
		if strings.HasPrefix(kv, "TERM=") {
			env = append(env, kv)
		}
	}
	return env, nil
}

// Redacted returns a copy of p whose secret env values (named like one,
// see redact.Name, or listed in PrivateEnv) are RedactedValue, for
// writing to disk.
func Redacted(p Payload) Payload {
	p.Env = maps.Clone(p.Env)
	for k := range p.Env {
		if redact.Name(k) || slices.Contains(p.PrivateEnv, k) {
			p.Env[k] = RedactedValue
		}
	}
	return p
}

// agentEnv builds the agent's environment from base: what p.EnvFilter
// drops is removed (TMUX and TMUX_PANE, the scrub list, secrets its
// executor does not need) unless p.Env gives the variable itself, PWD is
// set to the agent's working directory, p.Env is applied, then the
// WAVE_* identity of the run. A p.Env value still redacted (no env file
// restored it: a pod, whose Secret put it in base) keeps base's.
func agentEnv(base []string, p *Payload) []string {
	env := map[string]string{}
	var order []string
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if _, given := p.Env[k]; p.Drops(k) && !given {
			continue
		}
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	// The agent starts in p.Cwd, but PWD came from the launcher's shell:
	// tools that resolve paths against $PWD (opencode --file) would look
	// in the launcher's directory.
	if p.Cwd != "" {
		cwd := p.Cwd
		if abs, err := filepath.Abs(cwd); err == nil {
			cwd = abs
		}
		set("PWD", cwd)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		v := p.Env[k]
		if v == RedactedValue {
			if _, ok := env[k]; ok {
				continue
			}
		}
		set(k, v)
	}
	set("WAVE_LANE", p.Lane)
	set("WAVE_NUMBER", strconv.Itoa(p.WaveNumber))
	set("WAVE_AGENT_ID", p.AgentID)
	set("WAVE_ATTEMPT", strconv.Itoa(p.Attempt))
	set("WAVE_RUN_DIR", p.RunDir)
	set("WAVE_ORCHESTRATOR_ID", p.OrchestratorID)
	set("WAVE_EXECUTOR_MODE", p.ExecutorID)
	set(otelenv.ResourceAttributesEnv, otelenv.Merge(env[otelenv.ResourceAttributesEnv], resourceAttrs(p, env)))
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out
}

// DiscardEnv removes the env file of a run whose runner never started
// (its starter was killed between writing it and creating the session),
// so the secrets in it do not stay at rest.
func DiscardEnv(runDir string) error {
	err := os.Remove(filepath.Join(runDir, envFile))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
