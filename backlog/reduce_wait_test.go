package backlog

import (
	"testing"
	"time"
)

// TestReduceKeepsTheWaitWindowAcrossRestarts: the transient windows and
// the environment relaunches are in the events, so a supervisor that
// reads them after kill -9 knows the outage it was waiting out.
func TestReduceKeepsTheWaitWindowAcrossRestarts(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	start := func(s int, cause string) Event {
		return Event{Kind: EvWaitStarted, At: at(s), Cause: cause, Detail: "git push: " + cause}
	}
	end := func(s int, outcome string) Event { return Event{Kind: EvWaitEnded, At: at(s), Outcome: outcome} }
	until := func(s int) *time.Time { u := at(s); return &u }
	for _, c := range []struct {
		name   string
		events []Event
		want   []Wait
		open   bool
	}{
		{"no wait", nil, nil, false},
		{"waiting now (or killed waiting)", []Event{start(10, "origin unreachable")},
			[]Wait{{Cause: "origin unreachable", Detail: "git push: origin unreachable", Since: at(10)}}, true},
		{"recovered", []Event{start(10, "origin unreachable"), end(25, WaitRecovered)},
			[]Wait{{Cause: "origin unreachable", Detail: "git push: origin unreachable", Since: at(10), Until: until(25), Outcome: WaitRecovered}}, false},
		{"the cause changed: one window, from its first failure", []Event{start(10, "origin unreachable"), start(20, "no space left on device"), end(30, WaitRecovered)},
			[]Wait{{Cause: "no space left on device", Detail: "git push: no space left on device", Since: at(10), Until: until(30), Outcome: WaitRecovered}}, false},
		{"gave up, then a new window in the next life", []Event{start(10, "origin unreachable"), end(70, WaitGaveUp), start(100, "GitHub server error (HTTP 500)")},
			[]Wait{{Cause: "origin unreachable", Detail: "git push: origin unreachable", Since: at(10), Until: until(70), Outcome: WaitGaveUp},
				{Cause: "GitHub server error (HTTP 500)", Detail: "git push: GitHub server error (HTTP 500)", Since: at(100)}}, true},
		{"an end without a start is ignored", []Event{end(5, WaitRecovered)}, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Reduce(c.events)
			if len(r.Waits) != len(c.want) {
				t.Fatalf("waits %+v, want %+v", r.Waits, c.want)
			}
			for i, w := range r.Waits {
				g := c.want[i]
				if w.Cause != g.Cause || w.Detail != g.Detail || !w.Since.Equal(g.Since) || w.Outcome != g.Outcome ||
					(w.Until == nil) != (g.Until == nil) || w.Until != nil && !w.Until.Equal(*g.Until) {
					t.Errorf("wait %d: %+v, want %+v", i, w, g)
				}
			}
			if got := r.OpenWait() != nil; got != c.open {
				t.Errorf("open wait %v, want %v", got, c.open)
			}
		})
	}
}

func TestReduceCountsEnvironmentRelaunches(t *testing.T) {
	fin := func(o string) Event { return Event{Kind: EvWorkerFinished, Issue: 1, Outcome: o} }
	started := Event{Kind: EvWorkerStarted, Issue: 1, Salvage: true}
	for _, c := range []struct {
		name     string
		events   []Event
		env, sal int
	}{
		{"none", []Event{started, fin(OutcomeFailed)}, 0, 0},
		{"one outage", []Event{started, fin(OutcomeEnvironment), started}, 1, 0},
		{"two outages then a salvage", []Event{started, fin(OutcomeEnvironment), started, fin(OutcomeEnvironment), started, fin(OutcomeFailed),
			{Kind: EvWorkerStarted, Issue: 1, Salvage: true, Ref: "refs/wave/salvage/1/a3"}}, 2, 1},
		{"a stop is no outage", []Event{started, fin(OutcomeStopped), started}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := Reduce(c.events).Issues[1]
			if is.EnvRelaunches != c.env || is.Salvages != c.sal {
				t.Errorf("env relaunches %d, salvages %d; want %d, %d", is.EnvRelaunches, is.Salvages, c.env, c.sal)
			}
		})
	}
}
