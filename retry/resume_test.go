package retry

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/roles"
)

// What `resume` reruns first: a named phase means what it says, the
// resume plan reruns what is not proven, --rerun-proven reuses nothing
// and --agent adds agents (and moves closure's start back to them).
func TestResumeSelectsWhatTheRequestNames(t *testing.T) {
	proven := []string{"A1", "A2"}
	tests := []struct {
		name     string
		req      ResumeRequest
		reusable []string
		impl     []string
		from     string
		err      string
	}{
		{"--phase implementation reruns proven implementation agents", ResumeRequest{Phase: roles.PhaseImplementation}, proven,
			[]string{"A1", "A2"}, roles.PhaseContEval, ""},
		{"plan phase implementation reruns only the unproven", ResumeRequest{PlanPhase: roles.PhaseImplementation}, []string{"A1"},
			[]string{"A2"}, roles.PhaseContEval, ""},
		{"a completed wave's plan reruns closure only", ResumeRequest{PlanPhase: PhaseCompleted}, proven,
			nil, roles.PhaseContEval, ""},
		{"--rerun-proven on a completed wave reruns every implementation agent", ResumeRequest{PlanPhase: PhaseCompleted, RerunProven: true}, proven,
			[]string{"A1", "A2"}, roles.PhaseContEval, ""},
		{"--phase design keeps proven implementation agents", ResumeRequest{Phase: roles.PhaseDesign}, []string{"A1"},
			[]string{"D1", "A2"}, roles.PhaseContEval, ""},
		{"--phase design --rerun-proven reruns them too", ResumeRequest{Phase: roles.PhaseDesign, RerunProven: true}, []string{"A1"},
			[]string{"D1", "A1", "A2"}, roles.PhaseContEval, ""},
		{"--phase security-review runs closure from there", ResumeRequest{Phase: roles.PhaseSecurity}, proven,
			nil, roles.PhaseSecurity, ""},
		{"--rerun-proven with a closure plan phase means implementation", ResumeRequest{PlanPhase: roles.PhaseSecurity, RerunProven: true}, proven,
			[]string{"A1", "A2"}, roles.PhaseContEval, ""},
		{"--agent of a proven implementation agent reruns it and all closure", ResumeRequest{Phase: roles.PhaseSecurity, Agents: []string{"A1"}}, proven,
			[]string{"A1"}, roles.PhaseContEval, ""},
		{"--agent on a completed wave reruns just it and closure", ResumeRequest{PlanPhase: PhaseCompleted, Agents: []string{"A2"}}, proven,
			[]string{"A2"}, roles.PhaseContEval, ""},
		{"--agent of an earlier closure agent moves closure's start", ResumeRequest{Phase: roles.PhaseContQa, Agents: []string{"A8"}}, proven,
			nil, roles.PhaseIntegrating, ""},
		{"--agent of a later closure agent changes nothing", ResumeRequest{Phase: roles.PhaseIntegrating, Agents: []string{"A0"}}, proven,
			nil, roles.PhaseIntegrating, ""},
		{"--rerun-proven with a closure --phase is refused", ResumeRequest{Phase: roles.PhaseSecurity, RerunProven: true}, proven,
			nil, "", "--rerun-proven"},
		{"an unknown --agent is refused naming the wave's agents", ResumeRequest{Agents: []string{"ZZ"}}, proven,
			nil, "", "--agent ZZ: no such agent; the wave's agents are A0, A1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, b := testWave()
			impl, from, err := Resume(tc.req, w, b, tc.reusable)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "wave 3") {
					t.Fatalf("err %v, want one naming wave 3 and %q", err, tc.err)
				}
				if tc.req.RerunProven && !errors.Is(err, ErrRerunProvenClosure) {
					t.Fatalf("err %v is not ErrRerunProvenClosure", err)
				}
				return
			}
			if err != nil || !slices.Equal(impl, tc.impl) || from != tc.from {
				t.Fatalf("Resume = %v from %q (%v), want %v from %q", impl, from, err, tc.impl, tc.from)
			}
		})
	}
}
