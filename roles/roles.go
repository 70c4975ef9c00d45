// Package roles classifies the agents of a wave: closure role bindings
// (cont-QA, cont-EVAL, integration, documentation, security reviewers),
// design stewards, implementation owners, the runtime role used for
// executor defaults, and the closure stage order with resume phase names.
// It is pure.
package roles

import (
	"regexp"
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Default role prompt paths and ids (reference defaults).
const (
	DefaultSecurityRolePromptPath = "docs/agents/wave-security-role.md"
	DefaultDesignRolePromptPath   = "docs/agents/wave-design-role.md"
)

var (
	contQaReport   = regexp.MustCompile(`(?i)(?:^|/)(?:reviews?|.*cont[-_]?qa).*\.(?:md|txt)$`)
	contEvalReport = regexp.MustCompile(`(?i)(?:^|/)(?:reviews?|.*cont[-_]?eval|.*eval).*\.(?:md|txt)$`)
	securityReport = regexp.MustCompile(`(?i)(?:^|/).*security.*\.(?:md|txt)$`)
	designReport   = regexp.MustCompile(`(?i)(?:^|/).*(?:design|handoff|decision-lineage).*\.(?:md|txt)$`)
	titleWord      = map[string]*regexp.Regexp{
		RoleInfra:    regexp.MustCompile(`\binfra\b`),
		RoleDeploy:   regexp.MustCompile(`\bdeploy\b`),
		RoleResearch: regexp.MustCompile(`\bresearch\b`),
	}
)

func clean(p string) string { return strings.ReplaceAll(strings.TrimSpace(p), `\`, "/") }

// Bindings are the closure role ids of one wave. Ids come from config.
type Bindings struct {
	ContQa            string   `json:"contQaAgentId"`
	ContEval          string   `json:"contEvalAgentId"`
	Integration       string   `json:"integrationAgentId"`
	Documentation     string   `json:"documentationAgentId"`
	SecurityReviewers []string `json:"securityReviewerAgentIds"`
	Closure           []string `json:"closureAgentIds"` // sorted union of the above
	roles             config.Roles
}

// Bind resolves the bindings of w under the lane's roles config.
func Bind(w *wave.Wave, r config.Roles) Bindings {
	b := Bindings{
		ContQa:        or(r.ContQaAgentID, "A0"),
		ContEval:      or(r.ContEvalAgentID, "E0"),
		Integration:   or(r.IntegrationAgentID, "A8"),
		Documentation: or(r.DocumentationAgentID, "A9"),
		roles:         r,
	}
	for i := range w.Agents {
		if IsSecurityReviewer(&w.Agents[i], r) && !slices.Contains(b.SecurityReviewers, w.Agents[i].ID) {
			b.SecurityReviewers = append(b.SecurityReviewers, w.Agents[i].ID)
		}
	}
	slices.Sort(b.SecurityReviewers)
	set := []string{b.ContEval, b.Integration, b.Documentation, b.ContQa}
	set = append(set, b.SecurityReviewers...)
	slices.Sort(set)
	b.Closure = slices.Compact(set)
	return b
}

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// IsClosure reports whether id holds a closure role.
func (b Bindings) IsClosure(id string) bool { return slices.Contains(b.Closure, id) }

func hasRolePrompt(a *wave.Agent, configured, def, suffix string) bool {
	for _, p := range a.RolePromptPaths {
		p = clean(p)
		if (configured != "" && p == clean(configured)) || p == def || strings.HasSuffix(p, suffix) {
			return true
		}
	}
	return false
}

func hasCapability(a *wave.Agent, c string) bool {
	for _, v := range a.Capabilities {
		if strings.ToLower(strings.TrimSpace(v)) == c {
			return true
		}
	}
	return false
}

// IsSecurityReviewer: imports the security role prompt or declares the
// security-review capability.
func IsSecurityReviewer(a *wave.Agent, r config.Roles) bool {
	return hasRolePrompt(a, r.SecurityRolePromptPath, DefaultSecurityRolePromptPath, "/wave-security-role.md") ||
		hasCapability(a, "security-review")
}

// IsDesign: imports the design role prompt or declares the design capability.
func IsDesign(a *wave.Agent, r config.Roles) bool {
	return hasRolePrompt(a, r.DesignRolePromptPath, DefaultDesignRolePromptPath, "/wave-design-role.md") ||
		hasCapability(a, "design")
}

// IsHybridDesign: a design steward that also owns non-packet paths.
func IsHybridDesign(a *wave.Agent, r config.Roles) bool {
	if !IsDesign(a, r) {
		return false
	}
	for _, p := range a.OwnedPaths {
		if !designReport.MatchString(clean(p)) {
			return true
		}
	}
	return false
}

// IsDocsOnlyDesign: a design steward that owns only packet paths.
func IsDocsOnlyDesign(a *wave.Agent, r config.Roles) bool {
	return IsDesign(a, r) && !IsHybridDesign(a, r)
}

// IsContEvalReportOnly: the cont-EVAL agent owning only eval report paths.
func (b Bindings) IsContEvalReportOnly(a *wave.Agent) bool {
	if a.ID != b.ContEval {
		return false
	}
	for _, p := range a.OwnedPaths {
		if !contEvalReport.MatchString(clean(p)) {
			return false
		}
	}
	return true
}

// IsImplementationOwning: not cont-QA/integration/documentation, not a
// report-only cont-EVAL, not a docs-only design steward, not a security
// reviewer. These agents pass the implementation gate.
func (b Bindings) IsImplementationOwning(a *wave.Agent) bool {
	switch a.ID {
	case b.ContQa, b.Integration, b.Documentation:
		return false
	}
	if b.IsContEvalReportOnly(a) || IsDocsOnlyDesign(a, b.roles) || slices.Contains(b.SecurityReviewers, a.ID) {
		return false
	}
	return true
}

// Runtime roles, used for executor role defaults.
const (
	RoleContQa         = "cont-qa"
	RoleContEval       = "cont-eval"
	RoleIntegration    = "integration"
	RoleDocumentation  = "documentation"
	RoleDesign         = "design"
	RoleSecurity       = "security"
	RoleInfra          = "infra"
	RoleDeploy         = "deploy"
	RoleResearch       = "research"
	RoleImplementation = "implementation"
)

// RuntimeRole is the role used for executor defaults and prompts.
func (b Bindings) RuntimeRole(a *wave.Agent) string {
	switch {
	case a.ID == b.ContQa:
		return RoleContQa
	case a.ID == b.ContEval:
		return RoleContEval
	case a.ID == b.Integration:
		return RoleIntegration
	case a.ID == b.Documentation:
		return RoleDocumentation
	case IsDesign(a, b.roles):
		return RoleDesign
	case slices.Contains(b.SecurityReviewers, a.ID):
		return RoleSecurity
	}
	title := strings.ToLower(a.Title)
	for _, r := range []string{RoleInfra, RoleDeploy, RoleResearch} {
		for _, c := range a.Capabilities {
			if strings.HasPrefix(strings.ToLower(c), r) {
				return r
			}
		}
		// Whole words only, as the reference (/\binfra\b/): "Infrastructure" is not infra.
		if titleWord[r].MatchString(title) {
			return r
		}
	}
	return RoleImplementation
}

// ContQaReportPath is the first owned path that looks like a cont-QA
// report, else the first owned path.
func ContQaReportPath(a *wave.Agent) string {
	for _, p := range a.OwnedPaths {
		if contQaReport.MatchString(clean(p)) {
			return clean(p)
		}
	}
	if len(a.OwnedPaths) > 0 {
		return clean(a.OwnedPaths[0])
	}
	return ""
}

// ContEvalReportPath is the first owned eval report path.
func ContEvalReportPath(a *wave.Agent) string { return firstMatch(a, contEvalReport) }

// SecurityReportPath is the first owned path mentioning security.
func SecurityReportPath(a *wave.Agent) string { return firstMatch(a, securityReport) }

// DesignPacketPath is the first owned design/handoff packet path.
func DesignPacketPath(a *wave.Agent) string { return firstMatch(a, designReport) }

func firstMatch(a *wave.Agent, re *regexp.Regexp) string {
	for _, p := range a.OwnedPaths {
		if re.MatchString(clean(p)) {
			return clean(p)
		}
	}
	return ""
}
