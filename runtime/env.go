package runtime

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// RedactedValue stands in launch.json for a secret env value; the runner
// keeps the value it inherited from the tmux session env (new-session -e)
// instead.
const RedactedValue = "<redacted>"

var secretName = regexp.MustCompile(`(?i)token|secret|key|password`)

// Redacted returns a copy of p whose secret-looking env values are
// RedactedValue, for writing to disk.
func Redacted(p Payload) Payload {
	p.Env = maps.Clone(p.Env)
	for k := range p.Env {
		if secretName.MatchString(k) {
			p.Env[k] = RedactedValue
		}
	}
	return p
}

// agentEnv builds the agent's environment from the runner's: TMUX,
// TMUX_PANE and p.Scrub are removed (a child agent inside our pane must not
// drive the user's tmux, and some variables break agents), p.Env is
// applied, then the WAVE_* identity of the run.
func agentEnv(base []string, p *Payload) []string {
	drop := map[string]bool{"TMUX": true, "TMUX_PANE": true}
	for _, k := range p.Scrub {
		drop[k] = true
	}
	env := map[string]string{}
	var order []string
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		if drop[k] {
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
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out
}
