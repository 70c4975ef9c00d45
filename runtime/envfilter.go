package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/internal/redact"
)

// EnvFilter is what an agent loses of the environment it starts from.
// Workers are untrusted: a variable an agent is not given is one an
// injected prompt cannot read.
type EnvFilter struct {
	// Scrub lists variables removed from the agent environment.
	Scrub []string `json:"scrub"`
	// ScrubSecrets removes, too, every variable whose name says it holds
	// a secret (redact.Name) except KeepSecrets: the credentials
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
	return f.ScrubSecrets && redact.Name(name) && !slices.Contains(f.KeepSecrets, name)
}

// removePrivateFiles removes the run's generated private files once its
// agent is done with them (after its last rate-limit retry), so their
// contents do not stay at rest; a failure is noted in the log.
func removePrivateFiles(p *Payload, out *sink) {
	for _, f := range p.PrivateFiles {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			out.logLine(fmt.Sprintf("[wave] could not remove %s: %v", f, err))
		}
	}
}
