package retry

import (
	"slices"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// testWave: A1, A2 implement; D1 is a docs-only design steward; S1, S2
// review security; E0, A8, A9, A0 hold the other closure roles.
func testWave() (*wave.Wave, roles.Bindings) {
	contract := &wave.ExitContract{Completion: "contract", Durability: "none", Proof: "unit", DocImpact: "none"}
	w := &wave.Wave{Number: 3, File: "wave-3.md", Agents: []wave.Agent{
		{ID: "A0"}, {ID: "A1", ExitContract: contract}, {ID: "A2", ExitContract: contract},
		{ID: "A8"}, {ID: "A9"}, {ID: "E0"},
		{ID: "D1", Capabilities: []string{"design"}, OwnedPaths: []string{"docs/design/handoff.md"}},
		{ID: "S2", Capabilities: []string{"security-review"}},
		{ID: "S1", Capabilities: []string{"security-review"}},
	}}
	return w, roles.Bind(w, config.Roles{})
}

const passLog = "[wave-proof] completion=contract durability=none proof=unit state=met\n[wave-doc-delta] state=none\n"

func sum(id, hash string, code int, log string) gate.Summary {
	s := gate.Summary{AgentID: id, PromptHash: hash, ExitCode: &code, Signals: gate.ParseLog(log)}
	return s
}

func designSum() gate.Summary {
	s := sum("D1", "hd", 0, "[wave-design] state=ready-for-implementation decisions=1 assumptions=0 open_questions=0")
	s.ReportPath, s.ReportExists = "docs/design/handoff.md", true
	return s
}

func input(failures ...gate.Failure) PlanInput {
	w, b := testWave()
	return PlanInput{
		Wave: w, Bindings: b, Lane: "main", Attempt: 2,
		Summaries: map[string]gate.Summary{
			"A1": sum("A1", "h1", 0, passLog),
			"A2": sum("A2", "h2", 0, passLog),
			"D1": designSum(),
		},
		PromptHashes: map[string]string{"A1": "h1", "A2": "h2", "D1": "hd"},
		Failures:     failures,
	}
}

func TestPlanAllPass(t *testing.T) {
	p := Plan(input())
	if p.Reason != ReasonAllGatesPass || p.CanResume || p.ResumeFromPhase != PhaseCompleted || !p.Deterministic || p.ResumePlanVersion != 1 {
		t.Fatalf("plan = %+v", p)
	}
	if got := Targets(input(), p); got != nil {
		t.Fatalf("targets of a passed wave = %v", got)
	}
}

func TestPlanResumeFromPhasePerGate(t *testing.T) {
	tests := []struct {
		f    gate.Failure
		want string
	}{
		{gate.Failure{AgentID: "A2", Gate: gate.GateImplementation, StatusCode: "missing-wave-proof"}, roles.PhaseImplementation},
		{gate.Failure{AgentID: "A2", Gate: gate.GateComponent, StatusCode: "component-promotion-gap"}, roles.PhaseImplementation},
		{gate.Failure{AgentID: "D1", Gate: gate.GateDesign, StatusCode: "design-blocked"}, roles.PhaseDesign},
		{gate.Failure{AgentID: "E0", Gate: gate.GateContEval, StatusCode: "cont-eval-regressions"}, roles.PhaseContEval},
		{gate.Failure{AgentID: "S1", Gate: gate.GateSecurity, StatusCode: "security-blocked"}, roles.PhaseSecurity},
		{gate.Failure{AgentID: "A8", Gate: gate.GateIntegration, StatusCode: "integration-needs-more-work"}, roles.PhaseIntegrating},
		{gate.Failure{AgentID: "A9", Gate: gate.GateDocumentation, StatusCode: "doc-closure-open"}, roles.PhaseDocsClosure},
		{gate.Failure{AgentID: "A0", Gate: gate.GateContQa, StatusCode: "cont-qa-fail"}, roles.PhaseContQa},
		{gate.Failure{AgentID: "A9", StatusCode: "timeout-no-status"}, roles.PhaseDocsClosure}, // gate unknown: the agent's phase
	}
	for _, tc := range tests {
		p := Plan(input(tc.f))
		if p.ResumeFromPhase != tc.want || !p.CanResume {
			t.Errorf("%s/%s: resumeFromPhase %q canResume %v, want %q", tc.f.Gate, tc.f.StatusCode, p.ResumeFromPhase, p.CanResume, tc.want)
		}
	}
	// The earliest failing phase wins.
	p := Plan(input(
		gate.Failure{AgentID: "A0", Gate: gate.GateContQa, StatusCode: "cont-qa-fail"},
		gate.Failure{AgentID: "S1", Gate: gate.GateSecurity, StatusCode: "security-blocked"}))
	if p.ResumeFromPhase != roles.PhaseSecurity {
		t.Fatalf("resumeFromPhase = %q", p.ResumeFromPhase)
	}
}

func TestPlanReusableVsInvalidated(t *testing.T) {
	in := input(gate.Failure{AgentID: "A2", Gate: gate.GateImplementation, StatusCode: "3"})
	in.Summaries["A2"] = sum("A2", "h2", 3, passLog)
	p := Plan(in)
	if !slices.Equal(p.ReusableAgentIDs, []string{"A1", "D1"}) || !slices.Equal(p.InvalidatedAgentIDs, []string{"A2"}) {
		t.Fatalf("reusable %v invalidated %v", p.ReusableAgentIDs, p.InvalidatedAgentIDs)
	}
	if p.ResumeFromPhase != roles.PhaseImplementation || p.Reason != ReasonGateFailure {
		t.Fatalf("plan = %+v", p)
	}
	// A changed prompt invalidates a passing agent.
	in.PromptHashes["A1"] = "h1-new"
	p = Plan(in)
	if !slices.Equal(p.InvalidatedAgentIDs, []string{"A1", "A2"}) {
		t.Fatalf("changed prompt: invalidated %v", p.InvalidatedAgentIDs)
	}
	// Targets on an implementation resume: the invalidated agents, then
	// every closure stage in order.
	got := Targets(in, p)
	want := []string{"A1", "A2", "E0", "S1", "S2", "A8", "A9", "A0"}
	if !slices.Equal(got, want) {
		t.Fatalf("Targets = %v, want %v", got, want)
	}
}

func TestPlanForwardedClosureGapsCascade(t *testing.T) {
	in := input(gate.Failure{AgentID: "S1", Gate: gate.GateSecurity, StatusCode: "wave-proof-gap", Detail: "cannot prove authz"})
	p := Plan(in)
	if len(p.ForwardedClosureGaps) != 1 {
		t.Fatalf("gaps = %+v", p.ForwardedClosureGaps)
	}
	g := p.ForwardedClosureGaps[0]
	if g.StageKey != roles.PhaseSecurity || g.AgentID != "S1" || g.Attempt != 2 || g.Detail != "cannot prove authz" || g.Resolved {
		t.Fatalf("gap = %+v", g)
	}
	if want := []string{"S1", "S2", "A8", "A9", "A0"}; !slices.Equal(g.Targets, want) {
		t.Fatalf("gap targets = %v, want %v", g.Targets, want)
	}
	if p.ResumeFromPhase != roles.PhaseSecurity {
		t.Fatalf("resumeFromPhase = %q", p.ResumeFromPhase)
	}
	// Every closure agent at or after the gap's stage is invalidated; the
	// earlier E0 and the proven implementation agents are not.
	if want := []string{"A0", "A8", "A9", "S1", "S2"}; !slices.Equal(p.InvalidatedAgentIDs, want) {
		t.Fatalf("invalidated = %v, want %v", p.InvalidatedAgentIDs, want)
	}
	if want := []string{"A1", "A2", "D1"}; !slices.Equal(p.ReusableAgentIDs, want) {
		t.Fatalf("reusable = %v", p.ReusableAgentIDs)
	}
	if got, want := Targets(in, p), []string{"S1", "S2", "A8", "A9", "A0"}; !slices.Equal(got, want) {
		t.Fatalf("Targets = %v, want %v", got, want)
	}
	// Gaps sort by stage order; the earliest decides the resume phase.
	p = Plan(input(
		gate.Failure{AgentID: "A9", Gate: gate.GateDocumentation, StatusCode: "wave-proof-gap"},
		gate.Failure{AgentID: "E0", Gate: gate.GateContEval, StatusCode: "wave-proof-gap"}))
	if len(p.ForwardedClosureGaps) != 2 || p.ForwardedClosureGaps[0].AgentID != "E0" || p.ResumeFromPhase != roles.PhaseContEval {
		t.Fatalf("plan = %+v", p)
	}
	// An implementation agent's proof gap is not a closure gap.
	if p := Plan(input(gate.Failure{AgentID: "A1", Gate: gate.GateImplementation, StatusCode: "wave-proof-gap"})); len(p.ForwardedClosureGaps) != 0 {
		t.Fatalf("implementation gap forwarded: %+v", p.ForwardedClosureGaps)
	}
}

func TestPlanReasons(t *testing.T) {
	for _, tc := range []struct {
		code, want string
	}{
		{"human-feedback-open", ReasonHumanRequest},
		{"shared-component-sibling-pending", ReasonSiblingPending},
		{"timeout-no-status", ReasonTimeout},
		{"missing-wave-proof", ReasonGateFailure},
	} {
		in := input(gate.Failure{AgentID: "A2", Gate: gate.GateImplementation, StatusCode: tc.code})
		if p := Plan(in); p.Reason != tc.want {
			t.Errorf("%s: reason %q, want %q", tc.code, p.Reason, tc.want)
		}
	}
	in := input(gate.Failure{AgentID: "A2", Gate: gate.GateImplementation, StatusCode: "human-feedback-open"})
	if got := Targets(in, Plan(in)); got != nil {
		t.Fatalf("human request must not relaunch: %v", got)
	}
}

func TestTargetsPriority(t *testing.T) {
	// Open blockers win over the resume plan; the failed agent is kept.
	in := input(gate.Failure{AgentID: "A0", Gate: gate.GateContQa, StatusCode: "cont-qa-fail"})
	in.OpenBlockers = []string{"A2", "nobody"}
	if got, want := Targets(in, Plan(in)), []string{"A2", "A0"}; !slices.Equal(got, want) {
		t.Fatalf("blockers: Targets = %v, want %v", got, want)
	}
	// Shared-component siblings awaited.
	in = input(gate.Failure{AgentID: "A2", Gate: gate.GateComponent, StatusCode: "shared-component-sibling-pending"})
	if got, want := Targets(in, Plan(in)), []string{"A2"}; !slices.Equal(got, want) {
		t.Fatalf("siblings: Targets = %v, want %v", got, want)
	}
	// A closure-stage failure reruns that stage and every later one.
	in = input(gate.Failure{AgentID: "A8", Gate: gate.GateIntegration, StatusCode: "integration-needs-more-work"})
	if got, want := Targets(in, Plan(in)), []string{"A8", "A9", "A0"}; !slices.Equal(got, want) {
		t.Fatalf("closure: Targets = %v, want %v", got, want)
	}
}

func TestForPhase(t *testing.T) {
	w, b := testWave()
	impl, from, err := ForPhase(roles.PhaseSecurity, w, b, nil)
	if err != nil || impl != nil || from != roles.PhaseSecurity {
		t.Fatalf("ForPhase(security-review) = %v %q %v", impl, from, err)
	}
	if got, want := closureFrom(from, w, b), []string{"S1", "S2", "A8", "A9", "A0"}; !slices.Equal(got, want) {
		t.Fatalf("closure from security-review = %v, want %v", got, want)
	}
	impl, from, err = ForPhase(roles.PhaseImplementation, w, b, []string{"A1"})
	if err != nil || !slices.Equal(impl, []string{"A2"}) || from != roles.PhaseContEval {
		t.Fatalf("ForPhase(implementation) = %v %q %v", impl, from, err)
	}
	if got, want := closureFrom(from, w, b), []string{"E0", "S1", "S2", "A8", "A9", "A0"}; !slices.Equal(got, want) {
		t.Fatalf("closure from cont-eval = %v, want %v", got, want)
	}
	impl, from, err = ForPhase(roles.PhaseDesign, w, b, []string{"A1"})
	if err != nil || !slices.Equal(impl, []string{"D1", "A2"}) || from != roles.PhaseContEval {
		t.Fatalf("ForPhase(design) = %v %q %v", impl, from, err)
	}
	if _, _, err := ForPhase("deploy", w, b, nil); err == nil {
		t.Fatal("unknown phase accepted")
	}
}

func TestReusable(t *testing.T) {
	w, b := testWave()
	last := map[string]LastRun{
		"A1": {PromptHash: "h1", Code: 0, GateOK: true},
		"A2": {PromptHash: "h2", Code: 0, GateOK: true},
		"D1": {PromptHash: "hd", Code: 0, GateOK: false},
		"A8": {PromptHash: "h8", Code: 0, GateOK: true},
		"E0": {PromptHash: "he", Code: 1, GateOK: true},
	}
	current := map[string]string{"A1": "h1", "A2": "h2-changed", "D1": "hd", "A8": "h8", "E0": "he"}
	if got, want := Reusable(w, b, last, current), []string{"A1"}; !slices.Equal(got, want) {
		t.Fatalf("Reusable = %v, want %v", got, want)
	}
	current["A2"] = "h2"
	if got, want := Reusable(w, b, last, current), []string{"A1", "A2"}; !slices.Equal(got, want) {
		t.Fatalf("Reusable = %v, want %v", got, want)
	}
}

// The next attempt of a failed wave runs what Targets picks: rerun
// implementation agents bring closure back to its first stage; closure
// agents alone start it at the earliest of their stages and the resume
// phase.
func TestNextRunsWhatTargetsPicks(t *testing.T) {
	tests := []struct {
		name     string
		failures []gate.Failure
		blockers []string
		want     Selection
		without  string // an agent the wave does not have
	}{
		{"a failed implementation agent, then every closure stage",
			[]gate.Failure{{AgentID: "A2", Gate: gate.GateImplementation, StatusCode: "missing-wave-proof"}}, nil,
			Selection{Agents: []string{"A2"}, ClosureFrom: roles.PhaseContEval}, ""},
		{"the author of an open blocker with the agent it waits on",
			[]gate.Failure{{AgentID: "A1", Gate: gate.GateImplementation, StatusCode: "1"}}, []string{"A2", "A1"},
			Selection{Agents: []string{"A1", "A2"}, ClosureFrom: roles.PhaseContEval}, ""},
		{"a closure agent's blocker on an implementation agent reruns it and all of closure",
			[]gate.Failure{{AgentID: "A8", Gate: gate.GateIntegration, StatusCode: "integration-needs-more-work"}}, []string{"A8", "A2"},
			Selection{Agents: []string{"A2"}, ClosureFrom: roles.PhaseContEval}, ""},
		{"the sibling a shared component waits on, alone",
			[]gate.Failure{{AgentID: "A2", Gate: gate.GateComponent, StatusCode: "shared-component-sibling-pending"}}, nil,
			Selection{Agents: []string{"A2"}, ClosureFrom: roles.PhaseContEval}, ""},
		{"a failed closure stage and the later ones",
			[]gate.Failure{{AgentID: "A8", Gate: gate.GateIntegration, StatusCode: "integration-needs-more-work"}}, nil,
			Selection{ClosureFrom: roles.PhaseIntegrating}, ""},
		{"a closure blocker's author ahead of the failed stage",
			[]gate.Failure{{AgentID: "A0", Gate: gate.GateContQa, StatusCode: "cont-qa-fail"}}, []string{"A8"},
			Selection{ClosureFrom: roles.PhaseIntegrating}, ""},
		{"a required stage no agent holds is not skipped",
			[]gate.Failure{{Gate: gate.GateIntegration, StatusCode: "missing-closure-run"}}, nil,
			Selection{ClosureFrom: roles.PhaseIntegrating}, "A8"},
		{"a closure proof gap from its stage on",
			[]gate.Failure{{AgentID: "S1", Gate: gate.GateSecurity, StatusCode: "wave-proof-gap"}}, nil,
			Selection{ClosureFrom: roles.PhaseSecurity}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := input(tc.failures...)
			in.OpenBlockers = tc.blockers
			if tc.without != "" {
				in.Wave.Agents = slices.DeleteFunc(in.Wave.Agents, func(a wave.Agent) bool { return a.ID == tc.without })
				in.Bindings = roles.Bind(in.Wave, config.Roles{})
			}
			got := Next(in)
			if !slices.Equal(got.Agents, tc.want.Agents) || got.ClosureFrom != tc.want.ClosureFrom {
				t.Fatalf("Next = %+v, want %+v", got, tc.want)
			}
		})
	}
}
