package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/control"
	"github.com/wave-orchestrator/wave-orchestrator/internal/docschema"
)

// controlJSON runs `control status --json` with args and checks the
// output against docs/status-schema.md.
func controlJSON(t *testing.T, r *testRepo, sc docschema.Schema, args ...string) control.Status {
	t.Helper()
	res := r.run(ctxFor(t), append([]string{"control", "status", "--json"}, args...)...)
	if res.code != 0 {
		t.Fatalf("control status %v: exit %d %s", args, res.code, res.stderr)
	}
	var v any
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("control status %v: %v %q", args, err, res.stdout)
	}
	for _, e := range sc.Validate(v, "ControlStatus") {
		t.Errorf("control status %v: %s", args, e)
	}
	var s control.Status
	_ = json.Unmarshal([]byte(res.stdout), &s)
	return s
}

// `control status --json` of a completed wave, of a wave waiting on a
// person, and of a wave that has not run match the documented schema and
// say what the lane's state says.
func TestControlStatusMatchesItsDocumentedSchema(t *testing.T) {
	sc, err := docschema.Parse("../../docs/status-schema.md", "`control status")
	if err != nil {
		t.Fatal(err)
	}
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	r.writeWave(1, append([]agentSpec{implAgent("B1")}, closureAgents()...)...)
	if res := launch(t, r, "--end-wave", "0"); res.code != 0 {
		t.Fatalf("launch: %d %s", res.code, res.stderr)
	}
	s := controlJSON(t, r, sc, "--wave", "0")
	if s.Phase != "completed" || s.ExecutionState != "settled" || s.ClosureState != "passed" || s.ControllerState != "idle" || s.BlockingEdge != nil {
		t.Fatalf("completed wave: %+v", s)
	}
	post := r.run(ctxFor(t), "coord", "post", "--wave", "0", "--agent", "A1", "--kind", "human-feedback", "--summary", "is port 8081 free on the test host?")
	if post.code != 0 {
		t.Fatalf("post: %d %s", post.code, post.stderr)
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
	if res := r.run(ctxFor(t), "control", "status", "--wave", "7", "--json"); res.code != exitUsage || !strings.Contains(res.stderr, "no wave 7") {
		t.Fatalf("unknown wave: exit %d %s", res.code, res.stderr)
	}
	if res := r.run(ctxFor(t), "control", "status", "--wave", "0", "--agent", "Z9"); res.code != exitUsage || !strings.Contains(res.stderr, "no agent \"Z9\"") {
		t.Fatalf("unknown agent: exit %d %s", res.code, res.stderr)
	}
}
