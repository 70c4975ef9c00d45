package backlog

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// A usage limit pauses an executor, not the run: when a worker's CLI says
// its account is out, no worker of that executor starts until the limit
// resets (or, when the CLI named no reset, until a capped backoff), the
// worker that hit it keeps its claim and worktree, and the run's other
// work (merges, answers, workers of other executors) goes on. At the end
// of the pause its workers go on where they were.

// Outcomes of EvUsageLimit.
const (
	UsagePaused   = "paused"   // a pause opened (people are told)
	UsageExtended = "extended" // another worker hit the open pause's limit
	UsageResumed  = "resumed"
)

// Pause is one executor's usage-limit pause.
type Pause struct {
	Executor string    `json:"executor"`
	Since    time.Time `json:"since"`
	// Until is when its workers start again: the CLI's reset (a minute
	// later when it printed minutes only) or the backoff's end.
	Until time.Time `json:"until"`
	// Reset says Until is the CLI's own reset time, not a backoff.
	Reset  bool   `json:"reset"`
	Detail string `json:"detail"` // the CLI's words
	// Issues are the workers the limit stopped, waiting for its end.
	Issues []int `json:"issues"`
}

// Paused is the executor's open pause, nil when it has none.
func (r *Run) Paused(executor string) *Pause {
	return r.Pauses[executor]
}

// OpenPauses are the open pauses, by executor.
func (r *Run) OpenPauses() []Pause {
	var out []Pause
	for _, p := range r.Pauses {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Executor < out[j].Executor })
	return out
}

// BackoffPauses counts the executor's pauses in this run that named no
// reset: the backoff of the next one grows with them.
func (r *Run) BackoffPauses(executor string) int { return r.backoffs[executor] }

func (r *Run) usageLimit(ev Event) {
	if r.Pauses == nil {
		r.Pauses = map[string]*Pause{}
	}
	if ev.Outcome == UsageResumed {
		delete(r.Pauses, ev.Executor)
		return
	}
	p := r.Pauses[ev.Executor]
	if p == nil {
		p = &Pause{Executor: ev.Executor, Since: ev.At}
		r.Pauses[ev.Executor] = p
		if ev.Ref != "reset" {
			if r.backoffs == nil {
				r.backoffs = map[string]int{}
			}
			r.backoffs[ev.Executor]++
		}
	}
	if ev.Until != nil && ev.Until.After(p.Until) {
		p.Until, p.Reset = *ev.Until, ev.Ref == "reset"
	}
	if ev.Detail != "" {
		p.Detail = ev.Detail
	}
	if ev.Issue != 0 && !slices.Contains(p.Issues, ev.Issue) {
		p.Issues = append(p.Issues, ev.Issue)
	}
}

// PauseLine is how the supervisor, status, the dashboard and the page
// show a pause: "paused: claude usage limit until 15:00 (#3 #5 wait; …)".
// The time is the reader's local clock; tomorrow's or later carry the
// date.
func PauseLine(p Pause, now time.Time) string {
	until := p.Until.In(now.Location())
	when := until.Format("15:04")
	if y, m, d := now.Date(); until.Year() != y || until.Month() != m || until.Day() != d {
		when = until.Format("Jan 2 15:04")
	}
	how := "the CLI's reset"
	if !p.Reset {
		how = "no reset time given: backing off"
	}
	refs := make([]string, len(p.Issues))
	for i, n := range p.Issues {
		refs[i] = fmt.Sprintf("#%d", n)
	}
	waiting := ""
	if len(refs) > 0 {
		waiting = strings.Join(refs, " ") + " wait for it; "
	}
	return fmt.Sprintf("paused: %s usage limit until %s (%s; %sno new %s worker starts): %s",
		OneLine(p.Executor), when, how, waiting, OneLine(p.Executor), OneLine(p.Detail))
}
