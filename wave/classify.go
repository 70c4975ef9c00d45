package wave

import (
	"slices"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"regexp"
)

// Classification as in package roles, which imports wave (so wave keeps
// its own copy for parsing and validation).
var (
	contQaReportRe   = regexp.MustCompile(`(?i)(?:^|/)(?:reviews?|.*cont[-_]?qa).*\.(?:md|txt)$`)
	contEvalReportRe = regexp.MustCompile(`(?i)(?:^|/)(?:reviews?|.*cont[-_]?eval|.*eval).*\.(?:md|txt)$`)
	securityReportRe = regexp.MustCompile(`(?i)(?:^|/).*security.*\.(?:md|txt)$`)
	designReportRe   = regexp.MustCompile(`(?i)(?:^|/).*(?:design|handoff|decision-lineage).*\.(?:md|txt)$`)
)

func cleanPath(p string) string { return strings.ReplaceAll(jsTrim(p), `\`, "/") }

func isContQaReport(p string) bool   { return contQaReportRe.MatchString(cleanPath(p)) }
func isContEvalReport(p string) bool { return contEvalReportRe.MatchString(cleanPath(p)) }

// reportPath is the agent's first owned path matching match, else its
// first owned path; nil when the agent is absent or owns nothing.
func reportPath(w *Wave, id string, match func(string) bool) *string {
	a := w.agent(id)
	if a == nil || len(a.OwnedPaths) == 0 {
		return nil
	}
	for _, p := range a.OwnedPaths {
		if match(p) {
			return &p
		}
	}
	p := a.OwnedPaths[0]
	return &p
}

func (w *Wave) agent(id string) *Agent {
	for i := range w.Agents {
		if w.Agents[i].ID == id {
			return &w.Agents[i]
		}
	}
	return nil
}

func isRolePrompt(p, configured, def string) bool {
	n := cleanPath(p)
	return n == cleanPath(configured) || n == def || strings.HasSuffix(n, "/"+path1(def))
}

func path1(p string) string { return p[strings.LastIndex(p, "/")+1:] }

func hasCap(caps []string, c string) bool {
	return slices.ContainsFunc(caps, func(v string) bool { return strings.ToLower(jsTrim(v)) == c })
}

// normalizeCapabilities adds security-review / design when the agent
// imports that role prompt, as the reference does.
func normalizeCapabilities(caps, rolePrompts []string, r config.Roles) []string {
	has := func(configured, def string) bool {
		return slices.ContainsFunc(rolePrompts, func(p string) bool { return isRolePrompt(p, configured, def) })
	}
	if has(r.DesignRolePromptPath, DefaultDesignRolePrompt) && !hasCap(caps, "design") {
		caps = append(caps, "design")
	}
	if has(r.SecurityRolePromptPath, DefaultSecurityRolePrompt) && !hasCap(caps, "security-review") {
		caps = append(caps, "security-review")
	}
	return caps
}

func isSecurityReviewer(a *Agent, r config.Roles) bool {
	return slices.ContainsFunc(a.RolePromptPaths, func(p string) bool {
		return isRolePrompt(p, r.SecurityRolePromptPath, DefaultSecurityRolePrompt)
	}) || hasCap(a.Capabilities, "security-review")
}

func isDesign(a *Agent, r config.Roles) bool {
	return slices.ContainsFunc(a.RolePromptPaths, func(p string) bool {
		return isRolePrompt(p, r.DesignRolePromptPath, DefaultDesignRolePrompt)
	}) || hasCap(a.Capabilities, "design")
}

func ownsAnyNot(a *Agent, re *regexp.Regexp) bool {
	return slices.ContainsFunc(a.OwnedPaths, func(p string) bool {
		c := cleanPath(p)
		return c != "" && !re.MatchString(c)
	})
}

func isHybridDesign(a *Agent, r config.Roles) bool {
	return isDesign(a, r) && ownsAnyNot(a, designReportRe)
}

func isDocsOnlyDesign(a *Agent, r config.Roles) bool { return isDesign(a, r) && !isHybridDesign(a, r) }

func isContEvalReportOnly(a *Agent, r config.Roles) bool {
	return a.ID == r.ContEvalAgentID && !ownsAnyNot(a, contEvalReportRe)
}

// isClosureLike: agents that own no implementation (no components, no
// exit contract, no proof artifacts required).
func isClosureLike(a *Agent, r config.Roles) bool {
	switch a.ID {
	case r.ContQaAgentID, r.IntegrationAgentID, r.DocumentationAgentID:
		return true
	}
	return isContEvalReportOnly(a, r) || isDocsOnlyDesign(a, r) || isSecurityReviewer(a, r)
}

func firstOwned(a *Agent, re *regexp.Regexp) string {
	for _, p := range a.OwnedPaths {
		if c := cleanPath(p); c != "" && re.MatchString(c) {
			return c
		}
	}
	return ""
}

var titleWordRe = map[string]*regexp.Regexp{
	"infra":    regexp.MustCompile(`\binfra\b`),
	"deploy":   regexp.MustCompile(`\bdeploy\b`),
	"research": regexp.MustCompile(`\bresearch\b`),
}

// runtimeRole is the agent's runtime role as the reference infers it for
// executor defaults (package roles has the same rule for the launcher).
func runtimeRole(a *Agent, r config.Roles) string {
	switch {
	case a.ID == r.ContQaAgentID:
		return "cont-qa"
	case a.ID == r.ContEvalAgentID:
		return "cont-eval"
	case a.ID == r.IntegrationAgentID:
		return "integration"
	case a.ID == r.DocumentationAgentID:
		return "documentation"
	case isDesign(a, r):
		return "design"
	case isSecurityReviewer(a, r):
		return "security"
	}
	title := strings.ToLower(jsTrim(a.Title))
	for _, role := range []string{"infra", "deploy", "research"} {
		if slices.ContainsFunc(a.Capabilities, func(c string) bool {
			return strings.HasPrefix(strings.ToLower(jsTrim(c)), role)
		}) || titleWordRe[role].MatchString(title) {
			return role
		}
	}
	return "implementation"
}
