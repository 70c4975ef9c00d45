package wave

import (
	"encoding/json"
	"errors"
	"io/fs"
)

// DefaultContext7BundleIndexPath is where the reference keeps its Context7
// bundle index (paths.context7BundleIndexPath).
const DefaultContext7BundleIndexPath = "docs/context7/bundles.json"

// context7Bundles checks that every Context7 bundle a wave names (wave
// defaults, then each agent's own) is defined in the bundle index, which
// the reference requires before it launches anything. A repo without an
// index is not checked.
func (v *validator) context7Bundles() {
	if v.opts.ReadFile == nil {
		return
	}
	p := v.opts.Context7BundleIndexPath
	if p == "" {
		p = DefaultContext7BundleIndexPath
	}
	data, err := v.opts.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		v.ps.add(1, "", "context7-bundle-index", "Context7 bundle index %s: %v", p, err)
		return
	}
	var index struct {
		Bundles map[string]json.RawMessage `json:"bundles"`
	}
	if err := json.Unmarshal(data, &index); err != nil || index.Bundles == nil {
		v.ps.add(1, "", "context7-bundle-index", "Context7 bundle index %s needs a \"bundles\" object", p)
		return
	}
	known := func(b *string) bool {
		if b == nil || *b == "none" {
			return true
		}
		_, ok := index.Bundles[*b]
		return ok
	}
	if d := v.w.Context7Defaults; d != nil && !known(d.Bundle) {
		v.ps.add(v.topLine("Context7 defaults"), "", "unknown-context7-bundle", "Context7 bundle %q is not defined in %s", *d.Bundle, p)
	}
	for i := range v.w.Agents {
		a := &v.w.Agents[i]
		if c := a.Context7; c != nil && !known(c.Bundle) {
			v.ps.add(subLine(a, "Context7"), a.ID, "unknown-context7-bundle", "Context7 bundle %q is not defined in %s", *c.Bundle, p)
		}
	}
}
