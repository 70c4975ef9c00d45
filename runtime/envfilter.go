package runtime

import (
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// EnvFilter is what an agent loses of the environment it starts from.
// Workers are untrusted: a variable an agent is not given is one an
// injected prompt cannot read.
type EnvFilter struct {
	// Scrub lists variables removed from the agent environment.
	Scrub []string `json:"scrub"`
	// ScrubSecrets removes, too, every variable whose name says it holds
	// a secret (config.IsSecretName) except KeepSecrets: the credentials
	// the agent's own executor needs. Unset in a payload written before
	// the rule, which then loses only Scrub.
	ScrubSecrets bool     `json:"scrubSecrets,omitempty"`
	KeepSecrets  []string `json:"keepSecrets,omitempty"`
}

// Drops reports whether the agent loses the inherited variable name.
// TMUX and TMUX_PANE always go: a child agent inside our pane must not
// drive the user's tmux.
func (f EnvFilter) Drops(name string) bool {
	switch {
	case name == "TMUX" || name == "TMUX_PANE", slices.Contains(f.Scrub, name):
		return true
	}
	return f.ScrubSecrets && config.IsSecretName(name) && !slices.Contains(f.KeepSecrets, name)
}
