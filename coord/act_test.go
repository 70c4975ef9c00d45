package coord

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func logOf(t *testing.T) []Record {
	t.Helper()
	at := time.Unix(1000, 0)
	var recs []Record
	for _, r := range []Record{
		{ID: "b-1", Kind: "blocker", AgentID: "A1", Summary: "schema undecided"},
		{ID: "r-1", Kind: "request", AgentID: "A2", Summary: "need the schema", Targets: []string{"agent:A1"}, DependsOn: []string{"b-1"}},
		{ID: "q-1", Kind: "human-feedback", AgentID: "A2", Summary: "which port?"},
		{ID: "c-1", Kind: "claim", AgentID: "A1", Summary: "taking src", Status: "resolved"},
	} {
		if err := fill(&r, nil, at); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		at = at.Add(time.Second)
	}
	return recs
}

func TestActResolveDismissRerouteAppendTheRightUpdates(t *testing.T) {
	now := time.Unix(2000, 0)
	for _, tc := range []struct {
		action, id, to string
		want           []string // id:status of the appended records
		err            string
	}{
		{ActResolve, "b-1", "", []string{"b-1:resolved", "r-1:resolved"}, ""},
		{ActDismiss, "b-1", "", []string{"b-1:cancelled", "r-1:cancelled"}, ""},
		{ActResolve, "q-1", "", []string{"q-1:resolved"}, ""},
		{ActReroute, "r-1", "A3", []string{"r-1:superseded", "request:open"}, ""},
		{ActReroute, "r-1", "", nil, "--to"},
		{ActResolve, "c-1", "", nil, "already closed"},
		{ActResolve, "zz", "", nil, "open: b-1, r-1, q-1"},
	} {
		out, err := Act(logOf(t), 0, tc.action, tc.id, "", "operator", tc.to, now)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: err %v, want %q", tc.action, tc.id, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tc.action, tc.id, err)
		}
		var got []string
		for _, r := range out {
			key := r.ID
			if r.ID != tc.id && tc.action == ActReroute {
				key = r.Kind
				if !Targets(r, tc.to) || len(r.DependsOn) != 1 || r.DependsOn[0] != tc.id {
					t.Errorf("rerouted request %+v: want it targeted at %s, depending on %s", r, tc.to, tc.id)
				}
			}
			got = append(got, key+":"+r.Status)
			if !r.UpdatedAt.Equal(now.UTC()) {
				t.Errorf("%s: updatedAt %v, want %v", r.ID, r.UpdatedAt, now)
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s %s appended %v, want %v", tc.action, tc.id, got, tc.want)
		}
	}
	if _, err := Act(logOf(t), 0, ActResolve, "c-1", "", "", "", now); !errors.Is(err, ErrClosed) {
		t.Errorf("acting on a closed record: %v, want ErrClosed", err)
	}
}

func TestInboxIsWhatWaitsOnAnAgentOrAPerson(t *testing.T) {
	recs := logOf(t)
	ids := func(rs []Record) string {
		var s []string
		for _, r := range rs {
			s = append(s, r.ID)
		}
		return strings.Join(s, ",")
	}
	if got := ids(Inbox(recs, "A1")); got != "r-1" {
		t.Errorf("A1's inbox: %s, want r-1", got)
	}
	if got := ids(Inbox(recs, "")); got != "q-1" {
		t.Errorf("a person's inbox: %s, want q-1", got)
	}
	out, _ := Act(recs, 0, ActResolve, "b-1", "", "", "", time.Unix(3000, 0))
	if got := ids(Inbox(append(recs, out...), "A1")); got != "" {
		t.Errorf("A1's inbox after the cascade: %s, want empty", got)
	}
}
