package roles

import (
	"reflect"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func ag(id string, f func(a *wave.Agent)) wave.Agent {
	a := wave.Agent{ID: id, Title: id}
	if f != nil {
		f(&a)
	}
	return a
}

func owns(p ...string) func(a *wave.Agent) { return func(a *wave.Agent) { a.OwnedPaths = p } }

func TestBind(t *testing.T) {
	w := &wave.Wave{Agents: []wave.Agent{
		ag("A0", nil),
		ag("A7", func(a *wave.Agent) { a.RolePromptPaths = []string{"docs/agents/wave-security-role.md"} }),
		ag("A3", func(a *wave.Agent) { a.Capabilities = []string{" Security-Review "} }),
		ag("A1", nil),
	}}
	b := Bind(w, config.Roles{})
	if b.ContQa != "A0" || b.ContEval != "E0" || b.Integration != "A8" || b.Documentation != "A9" {
		t.Errorf("default ids = %+v", b)
	}
	if !reflect.DeepEqual(b.SecurityReviewers, []string{"A3", "A7"}) {
		t.Errorf("security reviewers = %v", b.SecurityReviewers)
	}
	if want := []string{"A0", "A3", "A7", "A8", "A9", "E0"}; !reflect.DeepEqual(b.Closure, want) {
		t.Errorf("closure = %v, want %v", b.Closure, want)
	}
	custom := Bind(w, config.Roles{ContQaAgentID: "Q", SecurityRolePromptPath: "prompts/sec.md"})
	if custom.ContQa != "Q" || !custom.IsClosure("Q") || custom.IsClosure("A0") {
		t.Errorf("configured cont-QA id not used: %+v", custom)
	}
}

func TestIsSecurityReviewer(t *testing.T) {
	r := config.Roles{SecurityRolePromptPath: "roles/sec.md"}
	tests := []struct {
		name string
		a    wave.Agent
		want bool
	}{
		{"configured path", ag("X", func(a *wave.Agent) { a.RolePromptPaths = []string{"roles/sec.md"} }), true},
		{"default path", ag("X", func(a *wave.Agent) { a.RolePromptPaths = []string{DefaultSecurityRolePromptPath} }), true},
		{"suffix", ag("X", func(a *wave.Agent) { a.RolePromptPaths = []string{`other\dir\wave-security-role.md`} }), true},
		{"capability", ag("X", func(a *wave.Agent) { a.Capabilities = []string{"security-review"} }), true},
		{"other prompt", ag("X", func(a *wave.Agent) { a.RolePromptPaths = []string{"docs/agents/wave-security-role.md.bak"} }), false},
		{"plain", ag("X", nil), false},
	}
	for _, tt := range tests {
		if got := IsSecurityReviewer(&tt.a, r); got != tt.want {
			t.Errorf("%s: IsSecurityReviewer = %v", tt.name, got)
		}
	}
}

func TestDesignClassification(t *testing.T) {
	design := func(paths ...string) wave.Agent {
		return ag("D", func(a *wave.Agent) { a.Capabilities = []string{"design"}; a.OwnedPaths = paths })
	}
	tests := []struct {
		name             string
		a                wave.Agent
		docsOnly, hybrid bool
	}{
		{"packet only", design("docs/plans/waves/design/wave-1-D.md"), true, false},
		{"handoff txt", design("notes/api-handoff.txt"), true, false},
		{"owns code", design("docs/design.md", "src/api.go"), false, true},
		{"owns nothing", design(), true, false},
		{"not design", ag("D", owns("src/")), false, false},
	}
	for _, tt := range tests {
		if got := IsDocsOnlyDesign(&tt.a, config.Roles{}); got != tt.docsOnly {
			t.Errorf("%s: IsDocsOnlyDesign = %v", tt.name, got)
		}
		if got := IsHybridDesign(&tt.a, config.Roles{}); got != tt.hybrid {
			t.Errorf("%s: IsHybridDesign = %v", tt.name, got)
		}
	}
}

func TestImplementationOwning(t *testing.T) {
	w := &wave.Wave{Agents: []wave.Agent{
		ag("A0", owns("reviews/q.md")),
		ag("E0", owns("docs/evals/wave-1-eval.md")),
		ag("A7", func(a *wave.Agent) { a.Capabilities = []string{"security-review"} }),
		ag("A1", owns("src/")),
	}}
	b := Bind(w, config.Roles{})
	got := map[string]bool{}
	for i := range w.Agents {
		got[w.Agents[i].ID] = b.IsImplementationOwning(&w.Agents[i])
	}
	if want := map[string]bool{"A0": false, "E0": false, "A7": false, "A1": true}; !reflect.DeepEqual(got, want) {
		t.Errorf("implementation owning = %v, want %v", got, want)
	}
	e0code := ag("E0", owns("docs/evals/wave-1-eval.md", "bench/run.go"))
	if b.IsContEvalReportOnly(&e0code) || !b.IsImplementationOwning(&e0code) {
		t.Error("an E0 owning code must be implementation-owning")
	}
}

func TestRuntimeRole(t *testing.T) {
	w := &wave.Wave{Agents: []wave.Agent{ag("A7", func(a *wave.Agent) { a.Capabilities = []string{"security-review"} })}}
	b := Bind(w, config.Roles{})
	tests := []struct {
		a    wave.Agent
		want string
	}{
		{ag("A0", nil), RoleContQa},
		{ag("E0", nil), RoleContEval},
		{ag("A8", nil), RoleIntegration},
		{ag("A9", nil), RoleDocumentation},
		{ag("D1", func(a *wave.Agent) { a.RolePromptPaths = []string{DefaultDesignRolePromptPath} }), RoleDesign},
		{w.Agents[0], RoleSecurity},
		{ag("A1", func(a *wave.Agent) { a.Capabilities = []string{"infra-k8s"} }), RoleInfra},
		{ag("A2", func(a *wave.Agent) { a.Title = "Deploy the service" }), RoleDeploy},
		{ag("A3", func(a *wave.Agent) { a.Title = "Research spike" }), RoleResearch},
		// The reference matches title words, not substrings.
		{ag("A4", func(a *wave.Agent) { a.Title = "Infrastructure docs" }), RoleImplementation},
		{ag("A5", func(a *wave.Agent) { a.Title = "Redeployment tool" }), RoleImplementation},
		{ag("A6", nil), RoleImplementation},
	}
	for _, tt := range tests {
		if got := b.RuntimeRole(&tt.a); got != tt.want {
			t.Errorf("RuntimeRole(%s %q) = %s, want %s", tt.a.ID, tt.a.Title, got, tt.want)
		}
	}
}

func TestReportPaths(t *testing.T) {
	tests := []struct {
		owned []string
		want  string
	}{
		{[]string{"src/a.go", "docs/plans/waves/reviews/wave-1-cont-qa.md"}, "docs/plans/waves/reviews/wave-1-cont-qa.md"},
		{[]string{"out/CONT_QA-report.TXT"}, "out/CONT_QA-report.TXT"},
		{[]string{"src/a.go", "notes.md"}, "src/a.go"},
		{nil, ""},
	}
	for _, tt := range tests {
		a := ag("A0", owns(tt.owned...))
		if got := ContQaReportPath(&a); got != tt.want {
			t.Errorf("ContQaReportPath(%v) = %q, want %q", tt.owned, got, tt.want)
		}
	}
	a := ag("A7", owns("src/x.go", ".tmp/security/wave-1-review.md"))
	if got := SecurityReportPath(&a); got != ".tmp/security/wave-1-review.md" {
		t.Errorf("SecurityReportPath = %q", got)
	}
	if got := ContEvalReportPath(&a); got != "" {
		t.Errorf("ContEvalReportPath = %q, want none", got)
	}
}

func TestStages(t *testing.T) {
	w := &wave.Wave{Agents: []wave.Agent{
		ag("A0", nil), ag("A8", nil), ag("A1", nil),
		ag("A7", func(a *wave.Agent) { a.Capabilities = []string{"security-review"} }),
	}}
	b := Bind(w, config.Roles{})
	got := b.Stages([]string{"A0", "A8", "A1", "A7"})
	want := []Stage{
		{Phase: PhaseContEval},
		{Phase: PhaseSecurity, Agents: []string{"A7"}},
		{Phase: PhaseIntegrating, Agents: []string{"A8"}},
		{Phase: PhaseDocsClosure},
		{Phase: PhaseContQa, Agents: []string{"A0"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Stages = %+v\nwant %+v", got, want)
	}
	if b.StageOf("A7") != PhaseSecurity || b.StageOf("A1") != "" {
		t.Errorf("StageOf wrong")
	}
	if err := ValidPhase("security-review"); err != nil {
		t.Error(err)
	}
	if err := ValidPhase("closure"); err == nil {
		t.Error("ValidPhase(closure): want error")
	}
	if PhaseIndex(PhaseContQa) <= PhaseIndex(PhaseDocsClosure) {
		t.Error("cont-QA closure must come after docs closure")
	}
}
