package retry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
)

// OverrideFile is the name of a wave's retry override in its wave
// directory (waves/<N>/retry-override.json).
const OverrideFile = "retry-override.json"

// OverrideKind is the override's kind field.
const OverrideKind = "wave-retry-override"

// Override is a rerun someone asked for (`retry apply`): what the next
// launch or resume of the wave runs instead of its own selection. It is
// removed when the wave run that used it ends, so a launcher killed
// mid-run and started again still follows it.
type Override struct {
	SchemaVersion    int       `json:"schemaVersion"`
	Kind             string    `json:"kind"`
	Lane             string    `json:"lane"`
	Wave             int       `json:"wave"`
	SelectedAgentIDs []string  `json:"selectedAgentIds"`
	ResumePhase      string    `json:"resumePhase"`
	RequestedBy      string    `json:"requestedBy"`
	Reason           string    `json:"reason"`
	ApplyOnce        bool      `json:"applyOnce"`
	CreatedAt        time.Time `json:"createdAt"`
}

// ErrOverrideEmpty: an override must name agents or a phase.
var ErrOverrideEmpty = errors.New("name --agent ID (repeatable) or --resume-phase PHASE: an override with neither reruns nothing")

// Check validates an override against the wave's agents.
func (o Override) Check(agents []string) error {
	if len(o.SelectedAgentIDs) == 0 && o.ResumePhase == "" {
		return ErrOverrideEmpty
	}
	if o.ResumePhase != "" {
		if err := roles.ValidPhase(o.ResumePhase); err != nil {
			return err
		}
	}
	for _, id := range o.SelectedAgentIDs {
		if !slices.Contains(agents, id) {
			return fmt.Errorf("wave %d has no agent %q; its agents are %s", o.Wave, id, strings.Join(agents, ", "))
		}
	}
	return nil
}

// Request is the resume request the override stands for.
func (o Override) Request() ResumeRequest {
	return ResumeRequest{Phase: o.ResumePhase, Agents: slices.Clone(o.SelectedAgentIDs)}
}

// OverridePath is the override's path in wave directory dir.
func OverridePath(waveDir string) string { return filepath.Join(waveDir, OverrideFile) }

// ReadOverride reads a wave's override: nil when there is none, an error
// naming the file when it cannot be read or parsed.
func ReadOverride(path string) (*Override, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("retry override %s: %w", path, err)
	}
	var o Override
	if err := json.Unmarshal(b, &o); err != nil || o.Kind != OverrideKind {
		if err == nil {
			err = fmt.Errorf("kind %q, want %q", o.Kind, OverrideKind)
		}
		return nil, fmt.Errorf("retry override %s is unreadable (%v); `retry clear --wave N` removes it", path, err)
	}
	return &o, nil
}

// WriteOverride replaces the wave's override atomically.
func WriteOverride(path string, o Override) error {
	if err := jsonfile.Write(path, o); err != nil {
		return fmt.Errorf("retry override %s: %w", path, err)
	}
	return nil
}

// ConsumeOverride removes the override at path if it is still the one
// taken (same creation time): one applied while the wave ran stays for
// the next run.
func ConsumeOverride(path string, taken Override) error {
	cur, err := ReadOverride(path)
	if err != nil || cur == nil || !cur.CreatedAt.Equal(taken.CreatedAt) {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("retry override %s: %w", path, err)
	}
	return nil
}
