package wave

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// Matrix is the component cutover matrix (the reference's
// component-cutover-matrix.json).
type Matrix struct {
	Levels     []string
	Components map[string]MatrixComponent
}

// MatrixComponent is one component of the matrix.
type MatrixComponent struct {
	CurrentLevel string
	Promotions   []MatrixPromotion
}

// MatrixPromotion is a component's planned level for one wave.
type MatrixPromotion struct {
	Wave   int
	Target string
}

// ParseMatrix reads the matrix JSON; file names it in errors.
func ParseMatrix(file string, data []byte) (*Matrix, error) {
	var raw struct {
		Levels     []string `json:"levels"`
		Components map[string]struct {
			CurrentLevel string `json:"currentLevel"`
			Promotions   []struct {
				Wave   json.RawMessage `json:"wave"`
				Target string          `json:"target"`
			} `json:"promotions"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("component matrix %s: %w", file, err)
	}
	if len(raw.Levels) == 0 {
		return nil, fmt.Errorf("component matrix %s: needs a non-empty \"levels\" array", file)
	}
	if raw.Components == nil {
		return nil, fmt.Errorf("component matrix %s: needs a \"components\" object", file)
	}
	m := &Matrix{Levels: raw.Levels, Components: map[string]MatrixComponent{}}
	for id, c := range raw.Components {
		if !idRe.MatchString(id) {
			return nil, fmt.Errorf("component matrix %s: component id %q must match %s", file, id, idRe)
		}
		if !slices.Contains(m.Levels, c.CurrentLevel) {
			return nil, fmt.Errorf("component matrix %s: component %s has unknown currentLevel %q", file, id, c.CurrentLevel)
		}
		mc := MatrixComponent{CurrentLevel: c.CurrentLevel}
		for i, p := range c.Promotions {
			var s string
			if json.Unmarshal(p.Wave, &s) != nil {
				s = string(p.Wave)
			}
			n, err := leadingInt(s)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("component matrix %s: component %s promotion %d has bad wave %s", file, id, i, p.Wave)
			}
			if !slices.Contains(m.Levels, p.Target) {
				return nil, fmt.Errorf("component matrix %s: component %s promotion %d has unknown target %q", file, id, i, p.Target)
			}
			mc.Promotions = append(mc.Promotions, MatrixPromotion{Wave: n, Target: p.Target})
		}
		m.Components[id] = mc
	}
	return m, nil
}

func (m *Matrix) level(l string) int { return slices.Index(m.Levels, l) }

// components checks agent components against the wave's promotions and,
// when a component rule is configured, the promotions against the matrix.
func (v *validator) components() {
	w, r, val := v.w, v.r, v.lane.Validation
	promoRule := v.active(val.RequireComponentPromotionsFromWave)
	agentRule := v.active(val.RequireAgentComponentsFromWave)
	promoted := map[string]string{}
	owners := map[string]int{}
	for _, p := range w.ComponentPromotions {
		promoted[p.ComponentID] = p.TargetLevel
	}
	line := v.topLine("Component promotions")
	var m *Matrix
	switch {
	case promoRule || agentRule:
		m = v.loadMatrix(false)
	case len(promoted) > 0:
		// The reference checks declared promotions against the matrix even
		// with the component rules off; we do too when the matrix exists.
		m = v.loadMatrix(true)
	}
	implementing := slices.ContainsFunc(w.Agents, func(a Agent) bool { return !isClosureLike(&a, r) })
	if promoRule && len(promoted) == 0 && implementing {
		v.ps.add(1, "", "missing-component-promotions", "waves %d and later need a \"## Component promotions\" section%s",
			*val.RequireComponentPromotionsFromWave, threshold("requireComponentPromotionsFromWave", val.RequireComponentPromotionsFromWave))
	}
	if m != nil {
		for _, p := range w.ComponentPromotions {
			c, ok := m.Components[p.ComponentID]
			switch {
			case !ok:
				v.ps.add(line, "", "unknown-component", "component %q is not in %s", p.ComponentID, v.lane.MatrixJSONPath)
			case m.level(p.TargetLevel) < 0:
				v.ps.add(line, "", "bad-enum", "component %s level %q is not a matrix level", p.ComponentID, p.TargetLevel)
			default:
				i := slices.IndexFunc(c.Promotions, func(mp MatrixPromotion) bool { return mp.Wave == w.Number })
				switch {
				case i < 0:
					v.ps.add(line, "", "matrix-promotion-missing", "%s has no wave %d promotion for %s", v.lane.MatrixJSONPath, w.Number, p.ComponentID)
				case c.Promotions[i].Target != p.TargetLevel:
					v.ps.add(line, "", "matrix-promotion-mismatch", "wave promotes %s to %s but %s says %s", p.ComponentID, p.TargetLevel, v.lane.MatrixJSONPath, c.Promotions[i].Target)
				case m.level(p.TargetLevel) < m.level(c.CurrentLevel) && !v.opts.CompletedWaves[w.Number]:
					v.ps.add(line, "", "promotion-below-current", "wave promotes %s to %s but %s already records %s", p.ComponentID, p.TargetLevel, v.lane.MatrixJSONPath, c.CurrentLevel)
				}
			}
		}
		ids := make([]string, 0, len(m.Components))
		for id := range m.Components {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			for _, mp := range m.Components[id].Promotions {
				if mp.Wave == w.Number && promoted[id] != mp.Target {
					v.ps.add(line, "", "undeclared-matrix-promotion", "wave must declare promotion %s: %s to match %s", id, mp.Target, v.lane.MatrixJSONPath)
				}
			}
		}
	}
	for i := range w.Agents {
		a := &w.Agents[i]
		if isClosureLike(a, r) {
			continue
		}
		for _, c := range a.Components {
			if m != nil {
				if _, ok := m.Components[c]; !ok {
					v.ps.add(subLine(a, "Components"), a.ID, "unknown-component", "component %q is not in %s", c, v.lane.MatrixJSONPath)
					continue
				}
			}
			if _, ok := promoted[c]; !ok {
				v.ps.add(subLine(a, "Components"), a.ID, "component-not-promoted", "component %q is not promoted in wave %d", c, w.Number)
				continue
			}
			owners[c]++
		}
	}
	for _, p := range w.ComponentPromotions {
		if owners[p.ComponentID] == 0 {
			v.ps.add(line, "", "promoted-component-unowned", "promoted component %q needs at least one implementation agent listing it under ### Components", p.ComponentID)
		}
	}
}

// loadMatrix reads the lane's component matrix. When optional, a missing
// matrix is no problem.
func (v *validator) loadMatrix(optional bool) *Matrix {
	p := v.lane.MatrixJSONPath
	if p == "" || optional && v.opts.ReadFile == nil {
		if !optional {
			v.ps.add(1, "", "component-matrix", "component rules are on but no component matrix path is configured")
		}
		return nil
	}
	if v.opts.ReadFile == nil {
		v.ps.add(1, "", "component-matrix", "component matrix %s: no file reader configured", p)
		return nil
	}
	data, err := v.opts.ReadFile(p)
	if err != nil && optional && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		v.ps.add(1, "", "component-matrix", "component matrix %s: %v", p, err)
		return nil
	}
	m, err := ParseMatrix(p, data)
	if err != nil {
		v.ps.add(1, "", "component-matrix", "%v", err)
		return nil
	}
	return m
}
