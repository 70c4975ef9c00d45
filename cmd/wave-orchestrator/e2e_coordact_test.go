package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
)

// postRecord posts a record to wave 0 and returns its id.
func postRecord(t *testing.T, r *testRepo, args ...string) string {
	t.Helper()
	res := r.run(ctxFor(t), append([]string{"coord", "post", "-w", "0", "--json"}, args...)...)
	var rec coord.Record
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &rec) != nil {
		t.Fatalf("coord post %v: exit %d %s%s", args, res.code, res.stdout, res.stderr)
	}
	return rec.ID
}

// resolve closes a blocker and what depends on it; dismiss cancels;
// reroute hands a request to another agent; inbox and show say so.
func TestCoordActResolvesDismissesAndReroutesOverTheLog(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	blocker := postRecord(t, r, "-a", "A1", "--kind", "blocker", "--summary", "config format undecided")
	req := postRecord(t, r, "-a", "A1", "--kind", "request", "--summary", "review the loader", "--target", "agent:A8")
	if res := r.run(ctxFor(t), "coord", "inbox", "-w", "0", "--agent", "A8"); !strings.Contains(res.stdout, req) {
		t.Fatalf("A8's inbox lacks %s: %s", req, res.stdout)
	}
	if res := r.run(ctxFor(t), "coord", "act", "reroute", req, "--to", "A9"); res.code != 0 || !strings.Contains(res.stdout, "superseded") {
		t.Fatalf("reroute: exit %d %s%s", res.code, res.stdout, res.stderr)
	}
	if res := r.run(ctxFor(t), "coord", "inbox", "-w", "0", "--agent", "A8", "--json"); strings.TrimSpace(res.stdout) != "[]" {
		t.Fatalf("A8's inbox after the reroute: %s", res.stdout)
	}
	var inbox []coord.Record
	res := r.run(ctxFor(t), "coord", "inbox", "-w", "0", "--agent", "A9", "--json")
	if json.Unmarshal([]byte(res.stdout), &inbox) != nil || len(inbox) != 1 || inbox[0].Summary != "review the loader" || inbox[0].DependsOn[0] != req {
		t.Fatalf("A9's inbox after the reroute: %s", res.stdout)
	}
	if res := r.run(ctxFor(t), "coord", "act", "dismiss", inbox[0].ID); res.code != 0 {
		t.Fatalf("dismiss: exit %d %s", res.code, res.stderr)
	}
	if res := r.run(ctxFor(t), "coord", "act", "resolve", blocker, "--detail", "TOML it is"); res.code != 0 {
		t.Fatalf("resolve: exit %d %s", res.code, res.stderr)
	}
	show := r.run(ctxFor(t), "coord", "show", blocker)
	if show.code != 0 || !strings.Contains(show.stdout, "status=resolved") || !strings.Contains(show.stdout, "detail: TOML it is") || !strings.Contains(show.stdout, "2 log lines") {
		t.Fatalf("coord show: exit %d %s%s", show.code, show.stdout, show.stderr)
	}
	if res := r.run(ctxFor(t), "coord", "act", "resolve", blocker); res.code == 0 || !strings.Contains(res.stderr, "already closed") {
		t.Fatalf("resolving twice: exit %d %s", res.code, res.stderr)
	}
	if res := r.run(ctxFor(t), "coord", "act", "resolve", "-w", "0", "nope-1"); res.code == 0 || !strings.Contains(res.stderr, `no coordination record "nope-1"`) {
		t.Fatalf("unknown id: exit %d %s", res.code, res.stderr)
	}
	if res := r.run(ctxFor(t), "coord", "act", "polish", blocker); res.code != exitUsage {
		t.Fatalf("unknown action: exit %d %s", res.code, res.stderr)
	}
}

// `coord act answer-human` writes the same answer record as the `answer`
// command: only ids, texts and times differ.
func TestCoordAnswerHumanWritesTheSameRecordAsAnswer(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	q1 := postRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", "staging or prod credentials?")
	q2 := postRecord(t, r, "-a", "A1", "--kind", "human-feedback", "--summary", "keep the old endpoint?")
	if res := r.run(ctxFor(t), "coord", "inbox", "-w", "0"); !strings.Contains(res.stdout, q1) || !strings.Contains(res.stdout, q2) {
		t.Fatalf("a person's inbox lacks the questions: %s", res.stdout)
	}
	res := r.run(ctxFor(t), "coord", "act", "answer-human", q1, "--response", "staging", "--operator", "dana")
	if res.code != 0 || !strings.Contains(res.stdout, "answered "+q1) {
		t.Fatalf("answer-human: exit %d %s%s", res.code, res.stdout, res.stderr)
	}
	if res := r.run(ctxFor(t), "answer", q2, "yes", "--operator", "dana"); res.code != 0 {
		t.Fatalf("answer: exit %d %s%s", res.code, res.stdout, res.stderr)
	}
	recs, _, err := coord.Read(r.layout().CoordinationPath(0))
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
	if res := r.run(ctxFor(t), "coord", "act", "answer-human", q1, "--response", "prod"); res.code == 0 || !strings.Contains(res.stderr, "already answered") {
		t.Fatalf("answering twice without --force: exit %d %s", res.code, res.stderr)
	}
	blocker := postRecord(t, r, "-a", "A1", "--kind", "blocker", "--summary", "not a question")
	if res := r.run(ctxFor(t), "coord", "act", "answer-human", blocker, "--response", "x"); res.code != exitUsage || !strings.Contains(res.stderr, "not a question") {
		t.Fatalf("answer-human on a blocker: exit %d %s", res.code, res.stderr)
	}
}
