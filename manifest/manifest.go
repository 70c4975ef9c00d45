// Package manifest builds the reference-shaped launch manifest
// (waves.manifest.json) from parsed waves. It sits beside the launcher,
// above both wave and roles (which imports wave), so every import points
// down the house.
package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/redact"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Manifest is the whole manifest file.
type Manifest struct {
	SchemaVersion int    `json:"schemaVersion"`
	Kind          string `json:"kind"`
	GeneratedAt   string `json:"generatedAt"`
	Source        string `json:"source"`
	Waves         []Wave `json:"waves"`
	Docs          []Doc  `json:"docs"`
}

// Wave is one wave entry, field order as the reference writes it.
type Wave struct {
	Wave                     int                       `json:"wave"`
	File                     string                    `json:"file"`
	CommitMessage            *string                   `json:"commitMessage"`
	DeployEnvironments       []wave.DeployEnvironment  `json:"deployEnvironments"`
	EvalTargets              []wave.EvalTarget         `json:"evalTargets"`
	Context7Defaults         *wave.Context7            `json:"context7Defaults"`
	ComponentPromotions      []wave.ComponentPromotion `json:"componentPromotions"`
	Agents                   []Agent                   `json:"agents"`
	ContQaReportPath         *string                   `json:"contQaReportPath"`
	ContEvalReportPath       *string                   `json:"contEvalReportPath"`
	Lane                     string                    `json:"lane"`
	ContQaAgentID            string                    `json:"contQaAgentId"`
	ContEvalAgentID          string                    `json:"contEvalAgentId"`
	IntegrationAgentID       string                    `json:"integrationAgentId"`
	DocumentationAgentID     string                    `json:"documentationAgentId"`
	SecurityReviewerAgentIDs []string                  `json:"securityReviewerAgentIds"`
	ClosureAgentIDs          []string                  `json:"closureAgentIds"`
}

// Agent is one agent entry, field order as the reference writes it.
type Agent struct {
	AgentID          string               `json:"agentId"`
	Title            string               `json:"title"`
	Slug             string               `json:"slug"`
	Prompt           string               `json:"prompt"`
	PromptOverlay    string               `json:"promptOverlay"`
	RolePromptPaths  []string             `json:"rolePromptPaths"`
	Context7Config   *wave.Context7       `json:"context7Config"`
	ExitContract     *ExitContract        `json:"exitContract"`
	ExecutorConfig   *wave.ExecutorConfig `json:"executorConfig"`
	Components       []string             `json:"components"`
	Capabilities     []string             `json:"capabilities"`
	Skills           []string             `json:"skills"`
	Deliverables     []string             `json:"deliverables"`
	ProofArtifacts   []wave.ProofArtifact `json:"proofArtifacts"`
	OwnedPaths       []string             `json:"ownedPaths"`
	ComponentTargets Targets              `json:"componentTargets"`
	ExecutorResolved any                  `json:"executorResolved"`
}

// ExitContract is the exit contract with unset fields as null.
type ExitContract struct {
	Completion *string `json:"completion"`
	Durability *string `json:"durability"`
	Proof      *string `json:"proof"`
	DocImpact  *string `json:"docImpact"`
}

// Target is one component's promotion level (nil when not promoted).
type Target struct {
	Component string
	Level     *string
}

// Targets marshals as a JSON object in component order, like the reference.
type Targets []Target

// MarshalJSON writes {"component": level, ...} in order.
func (t Targets) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range t {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.Component)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.Level)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Doc is one file under the docs directory with its size and hash.
type Doc struct {
	Path   string `json:"path"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Build builds the manifest. b gives each wave's role bindings; resolve
// (may be nil) gives each agent's executorResolved value. The caller sets
// Lane on each wave, Source and Docs (see Docs), or uses them as built.
func Build(waves []*wave.Wave, b func(w *wave.Wave) roles.Bindings, resolve func(w *wave.Wave, a *wave.Agent) any) Manifest {
	m := Manifest{
		SchemaVersion: 1,
		Kind:          "wave-manifest",
		GeneratedAt:   time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		Source:        "docs/**/*",
		Waves:         []Wave{},
		Docs:          []Doc{},
	}
	for _, w := range waves {
		bind := b(w)
		mw := Wave{
			Wave:                     w.Number,
			File:                     w.File,
			CommitMessage:            w.CommitMessage,
			DeployEnvironments:       nonNil(w.DeployEnvironments),
			EvalTargets:              nonNil(w.EvalTargets),
			Context7Defaults:         w.Context7Defaults,
			ComponentPromotions:      nonNil(w.ComponentPromotions),
			Agents:                   []Agent{},
			ContQaReportPath:         w.ContQaReportPath,
			ContEvalReportPath:       w.ContEvalReportPath,
			ContQaAgentID:            bind.ContQa,
			ContEvalAgentID:          bind.ContEval,
			IntegrationAgentID:       bind.Integration,
			DocumentationAgentID:     bind.Documentation,
			SecurityReviewerAgentIDs: nonNil(bind.SecurityReviewers),
			ClosureAgentIDs:          nonNil(bind.Closure),
		}
		for i := range w.Agents {
			a := &w.Agents[i]
			ma := Agent{
				AgentID:          a.ID,
				Title:            a.Title,
				Slug:             a.Slug,
				Prompt:           a.Prompt,
				PromptOverlay:    a.LocalPrompt,
				RolePromptPaths:  nonNil(a.RolePromptPaths),
				Context7Config:   a.Context7,
				ExitContract:     exitContract(a.ExitContract),
				ExecutorConfig:   a.Executor,
				Components:       nonNil(a.Components),
				Capabilities:     nonNil(a.Capabilities),
				Skills:           nonNil(a.Skills),
				Deliverables:     nonNil(a.Deliverables),
				ProofArtifacts:   nonNil(a.ProofArtifacts),
				OwnedPaths:       nonNil(a.OwnedPaths),
				ComponentTargets: Targets{},
			}
			for _, c := range a.Components {
				ma.ComponentTargets = append(ma.ComponentTargets, Target{c, a.ComponentTargets[c]})
			}
			if resolve != nil {
				ma.ExecutorResolved = resolve(w, a)
			}
			mw.Agents = append(mw.Agents, ma)
		}
		m.Waves = append(m.Waves, mw)
	}
	return m
}

// SetLane records the lane name on every wave.
func (m *Manifest) SetLane(lane string) {
	for i := range m.Waves {
		m.Waves[i].Lane = lane
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func exitContract(ec *wave.ExitContract) *ExitContract {
	if ec == nil {
		return nil
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return &ExitContract{opt(ec.Completion), opt(ec.Durability), opt(ec.Proof), opt(ec.DocImpact)}
}

// Docs lists every regular file under docsDir in fsys (rooted at the
// repo) with its size and SHA-256, as the reference records them: the
// content is read as UTF-8 text (invalid bytes become U+FFFD before
// hashing), symlinks are skipped, and paths are ordered by the reference's
// locale collation (JavaScript localeCompare), not byte order.
func Docs(fsys fs.FS, docsDir string) ([]Doc, error) {
	docs := []Doc{}
	err := fs.WalkDir(fsys, docsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		data = decodeUTF8(data)
		sum := sha256.Sum256(data)
		docs = append(docs, Doc{Path: p, Bytes: len(data), SHA256: hex.EncodeToString(sum[:])})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list docs under %s: %w", docsDir, err)
	}
	SortPaths(docs, func(d Doc) string { return d.Path })
	return docs, nil
}

// Source is the manifest's source glob for a docs dir.
func Source(docsDir string) string { return path.Clean(docsDir) + "/**/*" }

// Encode writes the manifest as indented JSON without HTML escaping, the
// way the reference writes it, with its secrets redacted (redact.JSON).
func (m Manifest) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	// An agent's executor config and its resolution may carry keys
	// (env.NAME, settingsJson.env, a provider's apiKey).
	return redact.JSON(b.Bytes())
}
