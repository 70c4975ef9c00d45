package gate

import (
	"slices"
	"strings"
)

// A marker line can be mangled on its way into the log without its
// content being wrong: a chat front end escapes `_` and `-`, an agent
// quotes or bolds a value or ends it with a comma, a JSON transport
// leaves a literal `\n` behind, a stray word trails the last value. Such
// a line is rejected by the grammar, yet every value it must carry is
// there. The reference adjudicates
// these instead of failing the wave; we do the same, deterministically:
// a rejected implementation-contract marker whose required values are all
// present and valid once that noise is stripped is accepted, with a
// recorded warning, when the run exited 0 and every file it declared is
// on disk. Anything else stays rejected.

// adjudicable are the marker kinds the implementation gate reads.
var adjudicable = []string{KindProof, KindDocDelta, KindComponent}

// repaired is a rejected marker line and its values with transport noise
// stripped.
type repaired struct {
	kind   string
	vals   map[string]string
	line   string
	reason string
}

// Adjudication is a marker rejected for its format only and accepted on
// adjudication (summary.json "adjudicated").
type Adjudication struct {
	Kind        string `json:"kind"`
	ComponentID string `json:"componentId,omitempty"`
	Line        string `json:"line"`
	Reason      string `json:"reason"` // why the grammar rejected it
}

// repairKey keys Signals.repairable: the kind, or the component id for
// component markers (one per component, as accepted ones are).
func repairKey(kind string, vals map[string]string) string {
	if kind == KindComponent {
		return kind + ":" + vals["component"]
	}
	return kind
}

// repair returns vals with transport noise stripped from every value but
// detail when that makes the marker valid, else nil. last is the key
// whose value ends the marker: when that value must be one word (an
// enumeration, a count, a component id or level), words after its first
// are stray ("state=met extra") and dropped.
func repair(kind string, sp spec, vals map[string]string, last string) map[string]string {
	if !slices.Contains(adjudicable, kind) {
		return nil
	}
	out := make(map[string]string, len(vals))
	changed := false
	for k, v := range vals {
		if k != "detail" {
			r := stripNoise(v)
			if f := strings.Fields(r); k == last && len(f) > 1 && oneWord(sp, k) {
				r = stripNoise(f[0])
			}
			changed = changed || r != v
			v = r
		}
		out[k] = v
	}
	if !changed || normalize(kind, sp, out) != "" {
		return nil
	}
	return out
}

// oneWord reports whether key's value is a single word in sp's grammar.
func oneWord(sp spec, key string) bool {
	_, enum := sp.enums[key]
	return enum || slices.Contains(sp.counts, key) || key == "component" || key == "level"
}

var markdownEscapes = strings.NewReplacer(`\_`, "_", `\-`, "-", `\*`, "*", "\\`", "`")

// stripNoise removes what transport adds around a value: literal escape
// sequences at its end, trailing separators, matching quotes, backticks
// or emphasis around it, and markdown backslash escapes inside it.
func stripNoise(v string) string {
	v = markdownEscapes.Replace(strings.TrimSpace(v))
	for {
		before := v
		for _, esc := range []string{`\n`, `\r`, `\t`} {
			v = strings.TrimSuffix(v, esc)
		}
		v = strings.TrimSpace(strings.TrimRight(v, ",;."))
		for _, w := range []string{"**", `"`, "'", "`", "*"} {
			if len(v) > 2*len(w) && strings.HasPrefix(v, w) && strings.HasSuffix(v, w) {
				v = strings.TrimSpace(v[len(w) : len(v)-len(w)])
			}
		}
		if v == before {
			return v
		}
	}
}

// adjudicate accepts the repairable markers of s that no accepted marker
// stands for, when the run exited 0 and landed every declared file.
func adjudicate(s *Summary) {
	if len(s.repairable) == 0 || s.ExitCode == nil || *s.ExitCode != 0 {
		return
	}
	for _, files := range [][]FileCheck{s.Deliverables, s.ProofArtifacts} {
		if slices.ContainsFunc(files, func(f FileCheck) bool { return !f.Exists }) {
			return
		}
	}
	keys := make([]string, 0, len(s.repairable))
	for k := range s.repairable {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	p := &parser{sig: s.Signals}
	for _, k := range keys {
		r := s.repairable[k]
		switch r.kind {
		case KindProof:
			if s.Proof != nil {
				continue
			}
		case KindDocDelta:
			if s.DocDelta != nil {
				continue
			}
		case KindComponent:
			if _, ok := s.Components[r.vals["component"]]; ok {
				continue
			}
		}
		p.set(r.kind, r.vals)
		a := Adjudication{Kind: r.kind, Line: r.line, Reason: r.reason}
		if r.kind == KindComponent {
			a.ComponentID = r.vals["component"]
		}
		s.Adjudicated = append(s.Adjudicated, a)
	}
	s.Signals = p.sig
}
