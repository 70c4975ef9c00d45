package wave

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// parseEvalTargets reads `## Eval targets` bullets:
// "- id: x | selection: delegated|pinned | benchmark-family: f | benchmarks: a,b | objective: t | threshold: t".
func parseEvalTargets(d *doc, b *block, ps *problems) []EvalTarget {
	out := []EvalTarget{}
	d.items(b, func(line int, s string) {
		m := bulletRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, "", "malformed-bullet", "eval target %q: want \"- id: <id> | selection: ... | objective: ... | threshold: ...\"", s)
			return
		}
		fields := map[string]string{}
		for _, seg := range strings.Split(m[1], "|") {
			pair := jsTrim(seg)
			if pair == "" {
				continue
			}
			i := strings.Index(pair, ":")
			var k, v string
			if i > 0 {
				k = strings.ToLower(jsTrim(pair[:i]))
				v = stripWrapped(pair[i+1:])
			}
			if k == "" || v == "" {
				ps.add(line, "", "bad-eval-target", "eval target field %q: want \"key: value\"", pair)
				return
			}
			fields[k] = v
		}
		t := EvalTarget{Benchmarks: []string{}}
		bad := func(format string, args ...any) { ps.add(line, "", "bad-eval-target", format, args...) }
		if t.ID = strings.ToLower(jsTrim(fields["id"])); !idRe.MatchString(t.ID) {
			bad("eval target id %q must match %s", t.ID, idRe)
			return
		}
		if t.Selection = strings.ToLower(jsTrim(fields["selection"])); t.Selection != "pinned" && t.Selection != "delegated" {
			ps.add(line, "", "bad-enum", "eval target %s selection %q: want pinned or delegated", t.ID, t.Selection)
			return
		}
		if f := jsTrim(fields["benchmark-family"]); f != "" {
			f = strings.ToLower(f)
			if !idRe.MatchString(f) {
				bad("eval target %s benchmark-family %q must match %s", t.ID, f, idRe)
				return
			}
			t.BenchmarkFamily = &f
		}
		for _, bm := range strings.Split(fields["benchmarks"], ",") {
			if bm = strings.ToLower(jsTrim(bm)); bm == "" {
				continue
			}
			if !idRe.MatchString(bm) {
				bad("eval target %s benchmark %q must match %s", t.ID, bm, idRe)
				return
			}
			t.Benchmarks = append(t.Benchmarks, bm)
		}
		t.Objective, t.Threshold = jsTrim(fields["objective"]), jsTrim(fields["threshold"])
		switch {
		case t.Objective == "":
			bad("eval target %s needs an objective", t.ID)
		case t.Threshold == "":
			bad("eval target %s needs a threshold", t.ID)
		case t.Selection == "delegated" && t.BenchmarkFamily == nil:
			bad("eval target %s: selection delegated needs benchmark-family", t.ID)
		case t.Selection == "pinned" && len(t.Benchmarks) == 0:
			bad("eval target %s: selection pinned needs benchmarks", t.ID)
		default:
			for _, o := range out {
				if o.ID == t.ID {
					ps.add(line, "", "duplicate-entry", "eval target %q listed twice", t.ID)
					return
				}
			}
			out = append(out, t)
		}
	})
	return out
}

// stripWrapped trims and removes one pair of wrapping quotes or backticks.
func stripWrapped(s string) string {
	s = jsTrim(s)
	if len(s) >= 2 && strings.ContainsRune("\"'`", rune(s[0])) && strings.ContainsRune("\"'`", rune(s[len(s)-1])) {
		s = s[1 : len(s)-1]
	}
	return jsTrim(s)
}

// DefaultBenchmarkCatalogPath is where the reference keeps its benchmark
// catalog (paths.benchmarkCatalogPath).
const DefaultBenchmarkCatalogPath = "docs/evals/benchmark-catalog.json"

// benchmarkCatalog maps benchmark ids to their family; families lists the
// family ids.
type benchmarkCatalog struct {
	families  map[string]bool
	benchmark map[string]string
}

func parseBenchmarkCatalog(file string, data []byte) (*benchmarkCatalog, error) {
	var raw struct {
		Families map[string]struct {
			Benchmarks map[string]json.RawMessage `json:"benchmarks"`
		} `json:"families"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("benchmark catalog %s: %w", file, err)
	}
	if raw.Families == nil {
		return nil, fmt.Errorf("benchmark catalog %s: needs a \"families\" object", file)
	}
	c := &benchmarkCatalog{families: map[string]bool{}, benchmark: map[string]string{}}
	for fid, f := range raw.Families {
		fid = strings.ToLower(jsTrim(fid))
		if len(f.Benchmarks) == 0 {
			return nil, fmt.Errorf("benchmark catalog %s: family %q needs a non-empty \"benchmarks\" object", file, fid)
		}
		c.families[fid] = true
		for bid := range f.Benchmarks {
			c.benchmark[strings.ToLower(jsTrim(bid))] = fid
		}
	}
	return c, nil
}

// evalTargetsAgainstCatalog checks eval targets against the lane's
// benchmark catalog, as the reference does when cont-EVAL runs. A repo
// without a catalog is not checked (the reference requires one).
func (v *validator) evalTargetsAgainstCatalog() {
	p := v.opts.BenchmarkCatalogPath
	if p == "" {
		p = DefaultBenchmarkCatalogPath
	}
	if v.opts.ReadFile == nil {
		return
	}
	data, err := v.opts.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	line := v.topLine("Eval targets")
	if err != nil {
		v.ps.add(line, "", "benchmark-catalog", "benchmark catalog %s: %v", p, err)
		return
	}
	c, err := parseBenchmarkCatalog(p, data)
	if err != nil {
		v.ps.add(line, "", "benchmark-catalog", "%v", err)
		return
	}
	for _, t := range v.w.EvalTargets {
		if t.Selection == "delegated" {
			if !c.families[*t.BenchmarkFamily] {
				v.ps.add(line, "", "unknown-benchmark", "eval target %s names benchmark family %q, which %s does not define", t.ID, *t.BenchmarkFamily, p)
			}
			continue
		}
		for _, b := range t.Benchmarks {
			fam, ok := c.benchmark[b]
			switch {
			case !ok:
				v.ps.add(line, "", "unknown-benchmark", "eval target %s names benchmark %q, which %s does not define", t.ID, b, p)
			case t.BenchmarkFamily != nil && *t.BenchmarkFamily != fam:
				v.ps.add(line, "", "benchmark-family-mismatch", "eval target %s pins benchmark %q of family %q, not its declared family %q", t.ID, b, fam, *t.BenchmarkFamily)
			}
		}
	}
}
