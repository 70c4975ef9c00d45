package coord

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPostDefaultsAndBlocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coordination.jsonl")
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	b, err := Post(path, Record{Kind: "blocker", AgentID: "A1", Summary: "schema undecided", Priority: "high"}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Blocking || b.BlockerSeverity != "hard" || b.Status != "open" {
		t.Fatalf("blocker defaults: %+v", b)
	}
	if _, err := Post(path, Record{Kind: "claim", AgentID: "A2", Summary: "took parser"}, nil, now); err != nil {
		t.Fatal(err)
	}
	if _, err := Post(path, Record{Kind: "request", AgentID: "A2", Summary: "need review"}, nil, now); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := Read(path)
	if err != nil || len(bad) != 0 || len(recs) != 3 {
		t.Fatalf("read: %d recs, bad %v, err %v", len(recs), bad, err)
	}
	open := Open(recs)
	if len(open) != 1 || open[0].ID != b.ID {
		t.Fatalf("open blockers = %+v, want only the blocker", open)
	}
	// Resolving by re-posting the same id releases the barrier.
	b.Status = "resolved"
	if _, err := Post(path, b, nil, now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	recs, _, _ = Read(path)
	if got := Open(recs); len(got) != 0 {
		t.Fatalf("after resolve, open = %+v", got)
	}
	if m := Materialize(recs); len(m) != 3 || !m[len(m)-1].CreatedAt.Equal(now) {
		t.Fatalf("materialize kept %d records / createdAt %v", len(m), m[len(m)-1].CreatedAt)
	}
}

func TestPostRejectsBadEnums(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	for _, r := range []Record{
		{Kind: "gossip", AgentID: "A1", Summary: "x"},
		{Kind: "claim", AgentID: "A1", Summary: "x", Status: "done"},
		{Kind: "claim", AgentID: "A1", Summary: "x", Priority: "asap"},
		{Kind: "claim", Summary: "x"},
	} {
		if _, err := Post(path, r, nil, time.Now()); err == nil {
			t.Errorf("Post(%+v) accepted", r)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("rejected records were written")
	}
}

func TestReadSkipsCorruptLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	if _, err := Post(path, Record{Kind: "claim", AgentID: "A1", Summary: "x"}, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("{\"torn\":\n")
	f.Close()
	recs, bad, err := Read(path)
	if err != nil || len(recs) != 1 || len(bad) != 1 || bad[0] != path+":2" {
		t.Fatalf("recs %d bad %v err %v", len(recs), bad, err)
	}
}

func TestWaitsOnPersonAndTargets(t *testing.T) {
	open := func(kind string, targets ...string) Record {
		r := Record{Kind: kind, AgentID: "A0", Summary: "s", Targets: targets}
		if err := fill(&r, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		rec  Record
		want bool
	}{
		{open("human-escalation"), true},
		{open("human-feedback"), true},
		{open("clarification-request"), true},
		{open("blocker"), false},
		{open("request"), false},
		{func() Record { r := open("human-escalation"); r.Status = "resolved"; return r }(), false},
	} {
		if got := WaitsOnPerson(tc.rec); got != tc.want {
			t.Errorf("WaitsOnPerson(%s/%s) = %v", tc.rec.Kind, tc.rec.Status, got)
		}
	}
	r := open("clarification-request", "agent:A1", "A2")
	if !Targets(r, "A1") || !Targets(r, "A2") || Targets(r, "A3") {
		t.Errorf("Targets of %v", r.Targets)
	}
}
