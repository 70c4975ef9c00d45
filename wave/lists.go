package wave

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/suggest"
)

var (
	bulletRe        = regexp.MustCompile(`^-\s+(.+?)\s*$`)
	keyValueRe      = regexp.MustCompile(`^-\s+([a-zA-Z0-9_-]+)\s*:\s*(.+?)\s*$`)
	componentRe     = regexp.MustCompile(`^-\s+([a-zA-Z0-9._-]+)\s*$`)
	promotionRe     = regexp.MustCompile(`^-\s+([a-zA-Z0-9._-]+)\s*:\s*([a-zA-Z0-9._-]+)\s*$`)
	idRe            = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	deployRe        = regexp.MustCompile("(?i)^-\\s+`?([a-z0-9][a-z0-9._-]*)`?\\s*:\\s*`?([a-z0-9][a-z0-9._-]*)`?\\s*(default)?(?:\\s+\\((.*)\\))?$")
	proofPathKeyRe  = regexp.MustCompile(`(?i)^path\s*:`)
	wrapQuoteEdgeRe = regexp.MustCompile("^[\"'`]|[\"'`]$")
)

// MaturityLevels are the component maturity levels in order.
var MaturityLevels = []string{
	"inventoried", "contract-frozen", "repo-landed", "baseline-proved", "pilot-live",
	"qa-proved", "fleet-ready", "cutover-ready", "deprecation-ready",
}

func maturity(level string) int { return slices.Index(MaturityLevels, level) }

// RepoContained reports whether p is relative and stays inside the repo.
func RepoContained(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) {
		return false
	}
	c := path.Clean(strings.ReplaceAll(p, `\`, "/"))
	return c != ".." && !strings.HasPrefix(c, "../")
}

// parsePaths reads "- path" bullets (deliverables).
func parsePaths(d *doc, b *block, ps *problems, agent, what string) ([]string, []int) {
	out, lines := []string{}, []int{}
	d.items(b, func(line int, s string) {
		m := bulletRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, agent, "malformed-bullet", "%s entry %q: want \"- <path>\"", what, s)
			return
		}
		p := jsTrim(quoteChars.ReplaceAllString(m[1], ""))
		switch {
		case !RepoContained(p):
			ps.add(line, agent, "path-outside-repo", "%s path %q must stay inside the repository", what, p)
		case slices.Contains(out, p):
			ps.add(line, agent, "duplicate-entry", "%s path %q listed twice", what, p)
		default:
			out, lines = append(out, p), append(lines, line)
		}
	})
	return out, lines
}

// parseIDs reads "- <id>" bullets (components, capabilities).
func parseIDs(d *doc, b *block, ps *problems, agent, what string) []string {
	out := []string{}
	d.items(b, func(line int, s string) {
		m := componentRe.FindStringSubmatch(s)
		switch {
		case m == nil:
			ps.add(line, agent, "malformed-bullet", "%s entry %q: want \"- <id>\"", what, s)
		case !idRe.MatchString(m[1]):
			ps.add(line, agent, "bad-id", "%s id %q must match %s", what, m[1], idRe)
		case slices.Contains(out, m[1]):
			ps.add(line, agent, "duplicate-entry", "%s %q listed twice", what, m[1])
		default:
			out = append(out, m[1])
		}
	})
	return out
}

func parseSkills(d *doc, b *block, ps *problems, agent string) []string {
	out := []string{}
	d.items(b, func(line int, s string) {
		m := bulletRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, agent, "malformed-bullet", "skill entry %q: want \"- <skill-id>\"", s)
			return
		}
		id := strings.ToLower(jsTrim(quoteChars.ReplaceAllString(m[1], "")))
		switch {
		case !idRe.MatchString(id):
			ps.add(line, agent, "bad-id", "skill id %q must match %s", id, idRe)
		case slices.Contains(out, id):
			ps.add(line, agent, "duplicate-entry", "skill %q listed twice", id)
		default:
			out = append(out, id)
		}
	})
	return out
}

func parseRolePrompts(d *doc, b *block, ps *problems, agent string) []string {
	out := []string{}
	if b == nil || d.text(b) == "" {
		return out
	}
	d.items(b, func(line int, s string) {
		m := bulletRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, agent, "malformed-bullet", "role prompt entry %q: want \"- <path>\"", s)
			return
		}
		p := jsTrim(quoteChars.ReplaceAllString(m[1], ""))
		if p == "" {
			ps.add(line, agent, "malformed-bullet", "empty role prompt entry")
		} else if !slices.Contains(out, p) {
			out = append(out, p)
		}
	})
	return out
}

func parsePromotions(d *doc, b *block, ps *problems) []ComponentPromotion {
	out := []ComponentPromotion{}
	d.items(b, func(line int, s string) {
		m := promotionRe.FindStringSubmatch(s)
		switch {
		case m == nil:
			ps.add(line, "", "malformed-bullet", "component promotion %q: want \"- <component>: <level>\"", s)
		case !idRe.MatchString(m[1]):
			ps.add(line, "", "bad-id", "component id %q must match %s", m[1], idRe)
		case slices.ContainsFunc(out, func(p ComponentPromotion) bool { return p.ComponentID == m[1] }):
			ps.add(line, "", "duplicate-entry", "component %q promoted twice", m[1])
		default:
			out = append(out, ComponentPromotion{ComponentID: m[1], TargetLevel: m[2]})
		}
	})
	return out
}

func parseDeployEnvironments(d *doc, b *block, ps *problems) []DeployEnvironment {
	out := []DeployEnvironment{}
	d.items(b, func(line int, s string) {
		m := deployRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, "", "malformed-bullet", "deploy environment %q: want \"- <id>: <kind> [default] [(notes)]\"", s)
			return
		}
		env := DeployEnvironment{ID: strings.ToLower(m[1]), Kind: strings.ToLower(m[2]), IsDefault: strings.EqualFold(m[3], "default")}
		if n := jsTrim(m[4]); n != "" {
			env.Notes = &n
		}
		if slices.ContainsFunc(out, func(e DeployEnvironment) bool { return e.ID == env.ID }) {
			ps.add(line, "", "duplicate-entry", "deploy environment %q listed twice", env.ID)
			return
		}
		out = append(out, env)
	})
	if len(out) > 0 && !slices.ContainsFunc(out, func(e DeployEnvironment) bool { return e.IsDefault }) {
		out[0].IsDefault = true
	}
	return out
}

// parseSettings reads "- key: value" bullets into a map (last value wins).
func parseSettings(d *doc, b *block, ps *problems, agent, what string) (map[string]string, map[string]int) {
	if b == nil || d.text(b) == "" {
		return nil, nil
	}
	vals, lines := map[string]string{}, map[string]int{}
	d.items(b, func(line int, s string) {
		m := keyValueRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, agent, "malformed-bullet", "%s setting %q: want \"- <key>: <value>\"", what, s)
			return
		}
		vals[m[1]], lines[m[1]] = m[2], line
	})
	return vals, lines
}

// unquote strips one pair of wrapping quotes, like the reference's Context7 cleanText.
func unquote(s string) string {
	s = jsTrim(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return jsTrim(s[1 : len(s)-1])
	}
	return s
}

var spaceRun = regexp.MustCompile(`\s+`)

func parseContext7(d *doc, b *block, ps *problems, agent string) *Context7 {
	vals, _ := parseSettings(d, b, ps, agent, "Context7")
	if vals == nil {
		return nil
	}
	bundle := unquote(vals["bundle"])
	query := jsTrim(spaceRun.ReplaceAllString(unquote(vals["query"]), " "))
	if r := []rune(query); len(r) > 280 {
		query = string(r[:279]) + "…"
	}
	if bundle == "" && query == "" {
		return nil
	}
	c := &Context7{}
	if bundle != "" {
		c.Bundle = &bundle
	}
	if query != "" {
		c.Query = &query
	}
	return c
}

// Exit contract enums, in order.
var (
	CompletionLevels = []string{"contract", "integrated", "authoritative", "live"}
	DurabilityLevels = []string{"none", "ephemeral", "durable"}
	ProofLevels      = []string{"unit", "integration", "live"}
	DocImpactLevels  = []string{"none", "owned", "shared-plan"}
)

// exitContractKeys are the keys of an exit contract and their values;
// docImpact is the reference's other spelling of doc-impact.
var exitContractKeys = map[string][]string{
	"completion": CompletionLevels, "durability": DurabilityLevels, "proof": ProofLevels,
	"doc-impact": DocImpactLevels, "docImpact": DocImpactLevels,
}

// parseExitContract reads an exit contract. Its keys and values are
// checked here, in every wave: a typo would otherwise pass doctor and the
// dry run and fail the gate only after the agent ran. Whether a wave must
// have a complete contract is the validator's (requireExitContractsFromWave).
func parseExitContract(d *doc, b *block, ps *problems, agent string) *ExitContract {
	vals, lines := parseSettings(d, b, ps, agent, "Exit contract")
	if vals == nil {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		want, known := exitContractKeys[k]
		v := jsTrim(vals[k])
		switch {
		case !known:
			keys := []string{"completion", "durability", "proof", "doc-impact"}
			ps.add(lines[k], agent, "unknown-exit-contract-key", "unknown exit contract key %q%s; want %s",
				k, suggest.Hint(k, keys), strings.Join(keys, ", "))
		case !slices.Contains(want, v):
			ps.add(lines[k], agent, "bad-exit-contract", "exit contract %s %q: want one of %s%s",
				k, v, strings.Join(want, ", "), suggest.Hint(v, want))
		}
	}
	docKey := "doc-impact"
	if vals["docImpact"] != "" {
		docKey = "docImpact"
	}
	ec := &ExitContract{
		Completion: jsTrim(vals["completion"]),
		Durability: jsTrim(vals["durability"]),
		Proof:      jsTrim(vals["proof"]),
		DocImpact:  jsTrim(vals[docKey]),
	}
	if *ec == (ExitContract{}) {
		return nil
	}
	return ec
}

func parseProofArtifacts(d *doc, b *block, ps *problems, agent string) ([]ProofArtifact, []int) {
	out, lines := []ProofArtifact{}, []int{}
	d.items(b, func(line int, s string) {
		m := bulletRe.FindStringSubmatch(s)
		if m == nil {
			ps.add(line, agent, "malformed-bullet", "proof artifact %q: want \"- <path>\" or \"- path: p | kind: k | required-for: level\"", s)
			return
		}
		entry := jsTrim(m[1])
		a := ProofArtifact{RequiredFor: []string{}}
		if !strings.Contains(entry, "|") && !proofPathKeyRe.MatchString(entry) {
			a.Path = jsTrim(quoteChars.ReplaceAllString(entry, ""))
		} else {
			fields := map[string]string{}
			for _, seg := range strings.Split(entry, "|") {
				pair := jsTrim(seg)
				if pair == "" {
					continue
				}
				i := strings.Index(pair, ":")
				var k, v string
				if i > 0 {
					k = strings.ToLower(jsTrim(pair[:i]))
					v = wrapQuoteEdgeRe.ReplaceAllString(jsTrim(pair[i+1:]), "")
				}
				if k == "" || v == "" {
					ps.add(line, agent, "malformed-bullet", "proof artifact field %q: want \"key: value\"", pair)
					return
				}
				fields[k] = v
			}
			a.Path = jsTrim(fields["path"])
			if a.Path == "" {
				ps.add(line, agent, "malformed-bullet", "proof artifact %q has no path", entry)
				return
			}
			for _, lvl := range strings.Split(fields["required-for"], ",") {
				if lvl = jsTrim(lvl); lvl == "" {
					continue
				}
				if maturity(lvl) < 0 {
					ps.add(line, agent, "bad-enum", "proof artifact required-for level %q: want one of %s", lvl, strings.Join(MaturityLevels, ", "))
					continue
				}
				a.RequiredFor = append(a.RequiredFor, lvl)
			}
			if k := jsTrim(fields["kind"]); k != "" {
				a.Kind = &k
			}
		}
		switch {
		case !RepoContained(a.Path):
			ps.add(line, agent, "path-outside-repo", "proof artifact path %q must stay inside the repository", a.Path)
		case strings.HasSuffix(normPath(a.Path), "/"):
			ps.add(line, agent, "proof-artifact-is-directory", "proof artifact %q must be a file, not a directory", a.Path)
		case slices.ContainsFunc(out, func(o ProofArtifact) bool { return o.Path == a.Path }):
			ps.add(line, agent, "duplicate-entry", "proof artifact %q listed twice", a.Path)
		default:
			out, lines = append(out, a), append(lines, line)
		}
	})
	return out, lines
}

// normPath normalises a repo-relative path for ownership checks.
func normPath(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if strings.HasPrefix(p, "./") {
		p = strings.TrimLeft(p[1:], "/")
	}
	return jsTrim(p)
}

// Owns reports whether the owned path (a file, or a directory ending in
// "/") covers the file p.
func Owns(owned, p string) bool {
	o, f := normPath(owned), normPath(p)
	if o == "" || f == "" {
		return false
	}
	if strings.HasSuffix(o, "/") {
		return strings.HasPrefix(f, o)
	}
	return f == o
}
