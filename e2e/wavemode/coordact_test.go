package wavemode

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
)

// resolve closes a blocker and what depends on it; dismiss cancels;
// reroute hands a request to another agent; inbox and show say so.
func TestCoordActResolvesDismissesAndReroutesOverTheLog(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	blocker := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "blocker", "--summary", "config format undecided")
	req := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "request", "--summary", "review the loader", "--target", "agent:A8")
	if res := r.Run(e2etest.Context(t), "coord", "inbox", "-w", "0", "--agent", "A8"); !strings.Contains(res.Stdout, req) {
		t.Fatalf("A8's inbox lacks %s: %s", req, res.Stdout)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "reroute", req, "--to", "A9"); res.Code != 0 || !strings.Contains(res.Stdout, "superseded") {
		t.Fatalf("reroute: exit %d %s%s", res.Code, res.Stdout, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "coord", "inbox", "-w", "0", "--agent", "A8", "--json"); strings.TrimSpace(res.Stdout) != "[]" {
		t.Fatalf("A8's inbox after the reroute: %s", res.Stdout)
	}
	var inbox []coord.Record
	res := r.Run(e2etest.Context(t), "coord", "inbox", "-w", "0", "--agent", "A9", "--json")
	if json.Unmarshal([]byte(res.Stdout), &inbox) != nil || len(inbox) != 1 || inbox[0].Summary != "review the loader" || inbox[0].DependsOn[0] != req {
		t.Fatalf("A9's inbox after the reroute: %s", res.Stdout)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "dismiss", inbox[0].ID); res.Code != 0 {
		t.Fatalf("dismiss: exit %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "resolve", blocker, "--detail", "TOML it is"); res.Code != 0 {
		t.Fatalf("resolve: exit %d %s", res.Code, res.Stderr)
	}
	show := r.Run(e2etest.Context(t), "coord", "show", blocker)
	if show.Code != 0 || !strings.Contains(show.Stdout, "status=resolved") || !strings.Contains(show.Stdout, "detail: TOML it is") || !strings.Contains(show.Stdout, "2 log lines") {
		t.Fatalf("coord show: exit %d %s%s", show.Code, show.Stdout, show.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "resolve", blocker); res.Code == 0 || !strings.Contains(res.Stderr, "already closed") {
		t.Fatalf("resolving twice: exit %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "resolve", "-w", "0", "nope-1"); res.Code == 0 || !strings.Contains(res.Stderr, `no coordination record "nope-1"`) {
		t.Fatalf("unknown id: exit %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "polish", blocker); res.Code != e2etest.ExitUsage {
		t.Fatalf("unknown action: exit %d %s", res.Code, res.Stderr)
	}
}

// `coord act answer-human` writes the same answer record as the `answer`
// command: only ids, texts and times differ.
func TestCoordAnswerHumanWritesTheSameRecordAsAnswer(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	q1 := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", "staging or prod credentials?")
	q2 := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", "keep the old endpoint?")
	if res := r.Run(e2etest.Context(t), "coord", "inbox", "-w", "0"); !strings.Contains(res.Stdout, q1) || !strings.Contains(res.Stdout, q2) {
		t.Fatalf("a person's inbox lacks the questions: %s", res.Stdout)
	}
	res := r.Run(e2etest.Context(t), "coord", "act", "answer-human", q1, "--response", "staging", "--operator", "dana")
	if res.Code != 0 || !strings.Contains(res.Stdout, "answered "+q1) {
		t.Fatalf("answer-human: exit %d %s%s", res.Code, res.Stdout, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "answer", q2, "yes", "--operator", "dana"); res.Code != 0 {
		t.Fatalf("answer: exit %d %s%s", res.Code, res.Stdout, res.Stderr)
	}
	recs, _, err := coord.Read(r.Layout().CoordinationPath(0))
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]map[string]any{}
	for _, rec := range recs {
		b, _ := json.Marshal(rec)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		// Times, ids and texts differ; that answeredAt is set does not.
		m["answeredAt"] = m["answeredAt"] != nil
		for _, k := range []string{"id", "summary", "answer", "createdAt", "updatedAt"} {
			delete(m, k)
		}
		last[rec.ID] = m
	}
	a, _ := json.Marshal(last[q1])
	b, _ := json.Marshal(last[q2])
	if string(a) != string(b) {
		t.Fatalf("answer-human's record differs from Answer's:\n%s\n%s", a, b)
	}
	if res := r.Run(e2etest.Context(t), "coord", "act", "answer-human", q1, "--response", "prod"); res.Code == 0 || !strings.Contains(res.Stderr, "already answered") {
		t.Fatalf("answering twice without --force: exit %d %s", res.Code, res.Stderr)
	}
	blocker := e2etest.PostRecord(t, r, "-a", "A1", "--kind", "blocker", "--summary", "not a question")
	if res := r.Run(e2etest.Context(t), "coord", "act", "answer-human", blocker, "--response", "x"); res.Code != e2etest.ExitUsage || !strings.Contains(res.Stderr, "not a question") {
		t.Fatalf("answer-human on a blocker: exit %d %s", res.Code, res.Stderr)
	}
}
