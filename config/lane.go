package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// sections are the parts of the top level a lane overrides key by key.
type sections struct {
	Roles      Roles      `json:"roles,omitzero"`
	Validation Validation `json:"validation,omitzero"`
	Executors  Executors  `json:"executors,omitzero"`
}

// Lane resolves lane name ("" means DefaultLane) into the merged view:
// the top level with lanes.<name> replayed over it. Roles, validation and
// each executor vendor section merge key by key; profiles merge by name
// (a lane's profile replaces the top-level one of the same name). A lane
// needs no config entry; an invalid lane name is an error.
//
// Directories follow the reference: the default lane of a single-repo
// config uses <docsDir>/plans/waves, any other lane
// <docsDir>/<lane>/plans/waves, unless the lane sets docsDir, plansDir or
// wavesDir. Top-level paths.plansDir/wavesDir apply to the default lane.
func (c *Config) Lane(repoRoot, name string) (*Lane, error) {
	if name == "" {
		name = orDefault(c.DefaultLane, defaultLaneName)
	}
	if err := lanes.ValidateLane(name); err != nil {
		return nil, &Error{File: c.src.file, Key: "lane", Msg: err.Error()}
	}
	abs, err := filepath.Abs(repoRoot)
	if err != nil {
		return nil, fmt.Errorf("lane %s: repo root %q: %w", name, repoRoot, err)
	}
	lc := c.Lanes[name]
	merged, err := c.mergeSections(lc)
	if err != nil {
		return nil, &Error{File: c.src.file, Key: "lanes." + name, Msg: err.Error()}
	}
	normalizeRoles(&merged.Roles)
	normalizeExecutors(&merged.Executors)

	l := &Lane{
		Name:          name,
		Project:       strings.TrimSpace(c.ProjectName),
		RepoRoot:      abs,
		Roles:         merged.Roles,
		Executors:     merged.Executors,
		Validation:    merged.Validation,
		RuntimePolicy: lowerRoles(mergeRuntimePolicy(c.RuntimePolicy, lc)),
		Runtime:       c.Runtime,
		Notify:        c.Notify,
		Pricing:       c.Pricing.Merged(),
		SecretEnv:     c.ConfiguredSecretEnv(),
	}
	if l.Project == "" {
		l.Project = filepath.Base(abs)
	}
	c.resolvePaths(l, lc)
	if errs := c.validateLane(l); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

// mergeSections replays the lane's own keys over a copy of the top level.
// Replaying the file's JSON (rather than copying non-zero fields) lets a
// lane set a value to false, 0 or null.
func (c *Config) mergeSections(lc LaneConfig) (sections, error) {
	top, err := json.Marshal(sections{Roles: c.Roles, Validation: c.Validation, Executors: c.Executors})
	if err != nil {
		return sections{}, err
	}
	var s sections
	if err := json.Unmarshal(top, &s); err != nil {
		return sections{}, err
	}
	over := lc.raw
	if over == nil {
		if over, err = json.Marshal(lc); err != nil {
			return sections{}, err
		}
	}
	if err := json.Unmarshal(over, &s); err != nil {
		return sections{}, err
	}
	return s, nil
}

func mergeRuntimePolicy(top RuntimePolicy, lc LaneConfig) RuntimePolicy {
	p := top
	if lc.RuntimePolicy.RuntimeMixTargets != nil {
		p.RuntimeMixTargets = lc.RuntimePolicy.RuntimeMixTargets
	}
	if lc.RuntimePolicy.DefaultExecutorByRole != nil {
		p.DefaultExecutorByRole = lc.RuntimePolicy.DefaultExecutorByRole
	}
	if lc.RuntimePolicy.FallbackExecutorOrder != nil {
		p.FallbackExecutorOrder = lc.RuntimePolicy.FallbackExecutorOrder
	}
	if lc.RuntimeMixTargets != nil {
		p.RuntimeMixTargets = lc.RuntimeMixTargets
	}
	if lc.DefaultExecutorByRole != nil {
		p.DefaultExecutorByRole = lc.DefaultExecutorByRole
	}
	if lc.FallbackExecutorOrder != nil {
		p.FallbackExecutorOrder = lc.FallbackExecutorOrder
	}
	return p
}

// lowerRoles keys defaultExecutorByRole by lower-case role, as the
// reference reads it (the schema accepts any case).
func lowerRoles(p RuntimePolicy) RuntimePolicy {
	if p.DefaultExecutorByRole == nil {
		return p
	}
	m := make(map[string]string, len(p.DefaultExecutorByRole))
	for k, v := range p.DefaultExecutorByRole {
		m[strings.ToLower(strings.TrimSpace(k))] = v
	}
	p.DefaultExecutorByRole = m
	return p
}

// first returns the first non-empty value.
func first(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func (c *Config) resolvePaths(l *Lane, lc LaneConfig) {
	var lp Paths
	if lc.Paths != nil {
		lp = *lc.Paths
	}
	isDefault := l.Name == orDefault(c.DefaultLane, defaultLaneName)
	topDocs := orDefault(c.Paths.DocsDir, defaultDocsDir)
	docs := joinPath(topDocs, l.Name)
	if c.RepoMode != "multi-lane" && isDefault {
		docs = topDocs
	}
	var topPlans, topWaves string
	if isDefault {
		topPlans, topWaves = c.Paths.PlansDir, c.Paths.WavesDir
	}
	l.DocsDir = first(lc.DocsDir, lp.DocsDir, docs)
	l.PlansDir = first(lc.PlansDir, lp.PlansDir, topPlans, joinPath(l.DocsDir, "plans"))
	l.WavesDir = first(lc.WavesDir, lp.WavesDir, topWaves, joinPath(l.PlansDir, "waves"))
	l.StateRoot = first(lc.StateRoot, lp.StateRoot, c.Paths.StateRoot, defaultStateRoot)
	l.MatrixDocPath = first(lc.ComponentCutoverMatrixDocPath, lp.ComponentCutoverMatrixDocPath,
		c.Paths.ComponentCutoverMatrixDocPath, joinPath(l.PlansDir, matrixDocName))
	l.MatrixJSONPath = first(lc.ComponentCutoverMatrixJSONPath, lp.ComponentCutoverMatrixJSONPath,
		c.Paths.ComponentCutoverMatrixJSONPath, joinPath(l.PlansDir, matrixJSONName))
	// Unlike the matrix, these default to fixed paths in every lane, as in
	// the reference.
	l.BenchmarkCatalogPath = first(lc.BenchmarkCatalogPath, lp.BenchmarkCatalogPath,
		c.Paths.BenchmarkCatalogPath, DefaultBenchmarkCatalogPath)
	l.Context7BundleIndexPath = first(lc.Context7BundleIndexPath, lp.Context7BundleIndexPath,
		c.Paths.Context7BundleIndexPath, DefaultContext7BundleIndexPath)
	switch {
	case lc.SharedPlanDocs != nil:
		l.SharedPlanDocs = lc.SharedPlanDocs
	case c.SharedPlanDocs != nil:
		l.SharedPlanDocs = c.SharedPlanDocs
	default:
		for _, n := range sharedPlanDocNames {
			l.SharedPlanDocs = append(l.SharedPlanDocs, joinPath(l.PlansDir, n))
		}
	}
	l.SharedPlanDocs = append([]string(nil), l.SharedPlanDocs...)
}
