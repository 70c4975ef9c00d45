package wave

import (
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
