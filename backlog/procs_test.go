package backlog

import (
	"encoding/json"
	"slices"
	"testing"
)

// The log keeps every process of the repository's code a supervisor
// started, with its identity, until a later supervisor recorded it
// ended what was left: a kill between the two leaves them all to look
// for again.
func TestRecordedProcessesStayUntilASupervisorEndedThem(t *testing.T) {
	started := func(n int, what string, pid int) Event {
		return Event{Kind: EvProcess, Issue: n, Outcome: ProcessStarted, Detail: what, Worktree: "/s/" + what, Proc: &ProcID{Pid: pid, Start: 10}}
	}
	ended := Event{Kind: EvProcess, Outcome: ProcessEnded}
	for _, tc := range []struct {
		name string
		evs  []Event
		want []int
	}{
		{"none", nil, nil},
		{"verify and its setup", []Event{started(1, "setup", 11), started(1, "verify", 12)}, []int{11, 12}},
		{"ended by the next supervisor", []Event{started(1, "verify", 12), started(2, "verify", 13), ended}, nil},
		{"started after the end", []Event{started(1, "verify", 12), ended, started(1, "verify", 14)}, []int{14}},
		{"no identity", []Event{{Kind: EvProcess, Issue: 1, Outcome: ProcessStarted}}, nil},
	} {
		r := Reduce(tc.evs)
		var got []int
		for _, p := range r.Processes {
			got = append(got, p.Pid)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: processes %v, want %v", tc.name, got, tc.want)
		}
	}
	r := Reduce([]Event{started(3, "verify", 12)})
	if p := r.Processes[0]; p != (Process{Issue: 3, What: "verify", Dir: "/s/verify", ProcID: ProcID{Pid: 12, Start: 10}}) {
		t.Errorf("recorded %+v", p)
	}
	if _, ok := r.Issues[3]; ok {
		t.Error("a process event made an issue of its own")
	}
	line, _ := json.Marshal(started(3, "verify", 12))
	var back Event
	if err := json.Unmarshal(line, &back); err != nil || back.Proc == nil || *back.Proc != (ProcID{Pid: 12, Start: 10}) {
		t.Errorf("the identity does not survive the log: %s → %+v (%v)", line, back.Proc, err)
	}
}
