package gate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// spec is the grammar of one marker kind: its keys in canonical order, the
// required ones, and the allowed values of enum keys.
type spec struct {
	keys     []string
	required []string
	enums    map[string][]string
	counts   []string // non-negative integers
}

// Ordered enums shared with the exit contract.
var (
	CompletionLevels = []string{"contract", "integrated", "authoritative", "live"}
	DurabilityLevels = []string{"none", "ephemeral", "durable"}
	ProofLevels      = []string{"unit", "integration", "live"}
	DocImpactLevels  = []string{"none", "owned", "shared-plan"}
	// ComponentLevels is the component maturity order.
	ComponentLevels = []string{"inventoried", "contract-frozen", "repo-landed", "baseline-proved",
		"pilot-live", "qa-proved", "fleet-ready", "cutover-ready", "deprecation-ready"}
	// MetStates are the states of a proof and a component marker;
	// "complete" is read as "met" (the reference's spelling), so a
	// prompt offers only these.
	MetStates     = []string{"met", "gap"}
	gateValues    = []string{"pass", "concerns", "blocked", "gap"}
	verdictValues = []string{"pass", "concerns", "blocked", "hold", "fail"}
)

// Values are the values key of a kind's marker accepts, nil when any
// is (a count, a note, an id).
func Values(kind, key string) []string {
	return slices.Clone(specs[kind].enums[key])
}

var specs = map[string]spec{
	KindProof: {
		keys: []string{"completion", "durability", "proof", "state", "detail"}, required: []string{"completion", "durability", "proof", "state"},
		enums: map[string][]string{"completion": CompletionLevels, "durability": DurabilityLevels, "proof": ProofLevels, "state": MetStates},
	},
	KindDocDelta: {
		keys: []string{"state", "paths", "detail"}, required: []string{"state"},
		enums: map[string][]string{"state": DocImpactLevels},
	},
	KindDocClosure: {
		keys: []string{"state", "paths", "detail"}, required: []string{"state"},
		enums: map[string][]string{"state": {"closed", "no-change", "delta"}},
	},
	KindIntegration: {
		keys: []string{"state", "claims", "conflicts", "blockers", "detail"}, required: []string{"state", "claims", "conflicts", "blockers"},
		enums:  map[string][]string{"state": {"ready-for-doc-closure", "needs-more-work"}},
		counts: []string{"claims", "conflicts", "blockers"},
	},
	KindEval: {
		keys: []string{"state", "targets", "benchmarks", "regressions", "target_ids", "benchmark_ids", "detail"}, required: []string{"state", "targets", "benchmarks", "regressions"},
		enums:  map[string][]string{"state": {"satisfied", "needs-more-work", "blocked"}},
		counts: []string{"targets", "benchmarks", "regressions"},
	},
	KindSecurity: {
		keys: []string{"state", "findings", "approvals", "detail"}, required: []string{"state", "findings", "approvals"},
		enums:  map[string][]string{"state": {"clear", "concerns", "blocked"}},
		counts: []string{"findings", "approvals"},
	},
	KindDesign: {
		keys: []string{"state", "decisions", "assumptions", "open_questions", "detail"}, required: []string{"state", "decisions", "assumptions", "open_questions"},
		enums:  map[string][]string{"state": {"ready-for-implementation", "needs-clarification", "blocked"}},
		counts: []string{"decisions", "assumptions", "open_questions"},
	},
	KindGate: {
		keys: []string{"architecture", "integration", "durability", "live", "docs", "detail"}, required: []string{"architecture", "integration", "durability", "live", "docs"},
		enums: map[string][]string{"architecture": gateValues, "integration": gateValues, "durability": gateValues, "live": gateValues, "docs": gateValues},
	},
	KindGap: {
		keys: []string{"kind", "detail"}, required: []string{"kind"},
		enums: map[string][]string{"kind": {"architecture", "integration", "durability", "ops", "docs"}},
	},
	KindComponent: {
		keys: []string{"component", "level", "state", "detail"}, required: []string{"component", "level", "state"},
		enums: map[string][]string{"state": MetStates},
	},
	KindVerdict: {
		keys: []string{"verdict", "detail"}, required: []string{"verdict"},
		enums: map[string][]string{"verdict": verdictValues},
	},
}

// keyValues splits `a=1 b=two words detail=x=y z` into values. A value
// runs to the next ` key=`. Once detail= has started, later `k=` tokens
// belong to the detail unless k is a required key still missing, so a
// detail may itself contain `=`. last is the key whose value runs to the
// end of the body.
func keyValues(body string, sp spec) (vals map[string]string, unknown []string, last string) {
	idx := keyStartRe.FindAllStringSubmatchIndex(body, -1)
	vals = map[string]string{}
	var keys []keyPos
	inDetail := false
	for _, m := range idx {
		name := strings.ToLower(body[m[2]:m[3]])
		if inDetail && !(slices.Contains(sp.required, name) && !has(keys, name)) {
			continue
		}
		keys = append(keys, keyPos{name, m[2], m[1]})
		if name == "detail" {
			inDetail = true
		}
	}
	for i, k := range keys {
		end := len(body)
		if i+1 < len(keys) {
			end = keys[i+1].start
		}
		v := strings.TrimSpace(body[k.vstart:end])
		if !slices.Contains(sp.keys, k.name) && !slices.Contains(unknown, k.name) {
			unknown = append(unknown, k.name)
		}
		vals[k.name] = v
		last = k.name
	}
	return vals, unknown, last
}

// keyPos is where a key starts in a marker body and where its value starts.
type keyPos struct {
	name          string
	start, vstart int
}

func has(keys []keyPos, name string) bool {
	for _, k := range keys {
		if k.name == name {
			return true
		}
	}
	return false
}

// normalize validates values against sp, returning the reason when the
// marker must be rejected.
func normalize(kind string, sp spec, vals map[string]string) string {
	for _, k := range sp.required {
		if vals[k] == "" {
			return "missing required key " + k
		}
	}
	if (kind == KindProof || kind == KindComponent) && strings.EqualFold(vals["state"], "complete") {
		vals["state"] = "met"
	}
	for _, k := range sp.keys {
		allowed, ok := sp.enums[k]
		v := strings.ToLower(vals[k])
		if !ok || v == "" {
			continue
		}
		if !slices.Contains(allowed, v) {
			return fmt.Sprintf("%s=%q is not one of %s", k, vals[k], strings.Join(allowed, "|"))
		}
		vals[k] = v
	}
	for _, k := range sp.counts {
		if n, err := strconv.Atoi(vals[k]); err != nil || n < 0 {
			return fmt.Sprintf("%s=%q is not a non-negative integer", k, vals[k])
		}
	}
	if kind == KindComponent {
		vals["level"] = strings.ToLower(vals["level"])
		if strings.ContainsAny(vals["component"], " \t") || strings.ContainsAny(vals["level"], " \t") {
			return "component and level must be single tokens"
		}
	}
	return ""
}

func (p *parser) accept(kind, line, body string) {
	sp := specs[kind]
	var vals map[string]string
	var unknown []string
	var last string
	if kind == KindVerdict && !strings.Contains(strings.SplitN(body, " ", 2)[0], "=") {
		// `[wave-verdict] pass detail=…` names the verdict without a key.
		first, rest, _ := strings.Cut(body, " ")
		vals, unknown, last = keyValues(rest, sp)
		vals["verdict"] = first
	} else {
		vals, unknown, last = keyValues(body, sp)
	}
	d := p.sig.Diagnostics[kind]
	d.RawCount++
	for _, u := range unknown {
		if !slices.Contains(d.UnknownKeysSeen, u) {
			d.UnknownKeysSeen = append(d.UnknownKeysSeen, u)
			slices.Sort(d.UnknownKeysSeen)
		}
	}
	// Recorded without transport noise, so a mangled marker of a
	// component is reported as malformed, not missing.
	compID := stripNoise(vals["component"])
	if kind == KindComponent && compID != "" && !slices.Contains(d.SeenComponentIDs, compID) {
		d.SeenComponentIDs = append(d.SeenComponentIDs, compID)
		slices.Sort(d.SeenComponentIDs)
	}
	if reason := normalize(kind, sp, vals); reason != "" {
		if rv := repair(kind, sp, vals, last); rv != nil {
			if p.sig.repairable == nil {
				p.sig.repairable = map[string]repaired{}
			}
			p.sig.repairable[repairKey(kind, rv)] = repaired{kind: kind, vals: rv, line: line, reason: reason}
		}
		d.RejectedCount++
		if len(d.RejectedSamples) < maxRejectedSamples {
			d.RejectedSamples = append(d.RejectedSamples, Rejected{Line: line, Reason: reason, ComponentID: compID})
		}
		p.sig.Diagnostics[kind] = d
		return
	}
	d.AcceptedCount++
	p.sig.Diagnostics[kind] = d
	p.set(kind, vals)
}

func csv(v string, lower bool) []string {
	out := []string{}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			if lower {
				s = strings.ToLower(s)
			}
			out = append(out, s)
		}
	}
	return out
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// set records an accepted marker; the last one of a kind wins.
func (p *parser) set(kind string, v map[string]string) {
	s := &p.sig
	switch kind {
	case KindProof:
		s.Proof = &Proof{v["completion"], v["durability"], v["proof"], v["state"], v["detail"]}
	case KindDocDelta:
		s.DocDelta = &DocDelta{v["state"], csv(v["paths"], false), v["detail"]}
	case KindDocClosure:
		s.DocClosure = &DocClosure{v["state"], csv(v["paths"], false), v["detail"]}
	case KindIntegration:
		s.Integration = &Integration{v["state"], atoi(v["claims"]), atoi(v["conflicts"]), atoi(v["blockers"]), v["detail"]}
	case KindEval:
		s.Eval = &Eval{v["state"], atoi(v["targets"]), atoi(v["benchmarks"]), atoi(v["regressions"]),
			csv(v["target_ids"], true), csv(v["benchmark_ids"], true), v["detail"]}
	case KindSecurity:
		s.Security = &Security{v["state"], atoi(v["findings"]), atoi(v["approvals"]), v["detail"]}
	case KindDesign:
		s.Design = &Design{v["state"], atoi(v["decisions"]), atoi(v["assumptions"]), atoi(v["open_questions"]), v["detail"]}
	case KindGate:
		s.Gate = &GateDims{v["architecture"], v["integration"], v["durability"], v["live"], v["docs"], v["detail"]}
	case KindVerdict:
		s.Verdict = &Verdict{v["verdict"], v["detail"]}
	case KindGap:
		s.Gaps = append(s.Gaps, Gap{v["kind"], v["detail"]})
	case KindComponent:
		s.Components[v["component"]] = Component{v["component"], v["level"], v["state"], v["detail"]}
	}
}
