package drive

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	"github.com/wave-orchestrator/wave-orchestrator/control"
	"github.com/wave-orchestrator/wave-orchestrator/internal/docschema"
)

// controlJSON runs `control status --json` with args and checks the
// output against docs/status-schema.md.
func controlJSON(t *testing.T, r *e2etest.Repo, sc docschema.Schema, args ...string) control.Status {
	t.Helper()
	res := r.Run(e2etest.Context(t), append([]string{"control", "status", "--json"}, args...)...)
	if res.Code != 0 {
		t.Fatalf("control status %v: exit %d %s", args, res.Code, res.Stderr)
	}
	var v any
	if err := json.Unmarshal([]byte(res.Stdout), &v); err != nil {
		t.Fatalf("control status %v: %v %q", args, err, res.Stdout)
	}
	for _, e := range sc.Validate(v, "ControlStatus") {
		t.Errorf("control status %v: %s", args, e)
	}
	var s control.Status
	_ = json.Unmarshal([]byte(res.Stdout), &s)
	return s
}

// `control status --json` of a completed wave, of a wave waiting on a
// person, and of a wave that has not run match the documented schema and
// say what the lane's state says.
func TestControlStatusMatchesItsDocumentedSchema(t *testing.T) {
	t.Parallel()
	sc, err := docschema.Parse("../../docs/status-schema.md", "`control status")
	if err != nil {
		t.Fatal(err)
	}
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	r.WriteWave(1, append([]e2etest.Agent{e2etest.ImplAgent("B1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r, "--end-wave", "0"); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	s := controlJSON(t, r, sc, "--wave", "0")
	if s.Phase != "completed" || s.ExecutionState != "settled" || s.ClosureState != "passed" || s.ControllerState != "idle" || s.BlockingEdge != nil {
		t.Fatalf("completed wave: %+v", s)
	}
	post := r.Run(e2etest.Context(t), "coord", "post", "--wave", "0", "--agent", "A1", "--kind", "human-feedback", "--summary", "is port 8081 free on the test host?")
	if post.Code != 0 {
		t.Fatalf("post: %d %s", post.Code, post.Stderr)
	}
	s = controlJSON(t, r, sc, "--wave", "0", "--agent", "A1")
	if s.BlockingEdge == nil || s.BlockingEdge.Kind != "human-input" || s.ControllerState != "waiting-human" ||
		len(s.FeedbackRequests) != 1 || s.FeedbackRequests[0].State != "pending" || len(s.LogicalAgents) != 1 || s.LogicalAgents[0].State != "blocked" {
		t.Fatalf("wave with a question, --agent A1: %+v", s)
	}
	s = controlJSON(t, r, sc, "--wave", "1")
	if s.Status != "pending" || s.ExecutionState != "pending" || len(s.LogicalAgents) != 4 || s.LogicalAgents[0].AgentID != "B1" {
		t.Fatalf("wave not run: %+v", s)
	}
	if res := r.Run(e2etest.Context(t), "control", "status", "--wave", "7", "--json"); res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "no wave 7") {
		t.Fatalf("unknown wave: exit %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "control", "status", "--wave", "0", "--agent", "Z9"); res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "no agent \"Z9\"") {
		t.Fatalf("unknown agent: exit %d %s", res.Code, res.Stderr)
	}
}
