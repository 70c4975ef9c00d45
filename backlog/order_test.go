package backlog

import (
	"slices"
	"testing"
	"time"
)

func TestPriority(t *testing.T) {
	cases := []struct {
		labels []string
		want   int
	}{
		{[]string{"P0"}, PriorityCritical},
		{[]string{"priority:critical"}, PriorityCritical},
		{[]string{"p1"}, PriorityHigh},
		{[]string{"Priority:High"}, PriorityHigh},
		{[]string{"priority:p1"}, PriorityHigh}, // local front matter "priority: P1"
		{[]string{"P2"}, PriorityMedium},
		{[]string{"priority:medium"}, PriorityMedium},
		{[]string{"P3"}, PriorityLow},
		{[]string{"priority: low"}, PriorityLow},
		{[]string{"bug", "P3", "P1"}, PriorityHigh}, // the highest wins
		{nil, PriorityNone},
		{[]string{"high", "critical", "P9", "priority:urgent"}, PriorityNone}, // no prefix, or unknown
	}
	for _, c := range cases {
		if got := Priority(c.labels); got != c.want {
			t.Errorf("Priority(%q) = %d, want %d", c.labels, got, c.want)
		}
	}
}

func TestSortIssues(t *testing.T) {
	at := func(d int) time.Time { return day0().AddDate(0, 0, d) }
	issues := []Issue{
		{Number: 10, CreatedAt: at(1)},                         // unlabeled
		{Number: 11, CreatedAt: at(5), Labels: []string{"P3"}}, // low
		{Number: 12, CreatedAt: at(9), Labels: []string{"P0"}}, // critical, newest
		{Number: 13, CreatedAt: at(2), Labels: []string{"priority:high"}},
		{Number: 14, CreatedAt: at(1), Labels: []string{"P1"}}, // high, older than 13
		{Number: 15, Labels: []string{"P1"}},                   // high, no date: after dated ones
		{Number: 9, CreatedAt: at(1)},                          // unlabeled, same time as 10: number decides
		{Number: 16, CreatedAt: at(0), Labels: []string{"priority:medium"}},
	}
	SortIssues(issues)
	var got []int
	for _, is := range issues {
		got = append(got, is.Number)
	}
	want := []int{12, 14, 13, 15, 16, 11, 9, 10}
	if !slices.Equal(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

// FIFO with aging: among equals, a newer issue never overtakes an older
// one, however many arrive after it.
func TestSortIssuesNeverStarvesTheOldest(t *testing.T) {
	issues := []Issue{{Number: 1, CreatedAt: day0()}}
	for n := 2; n < 50; n++ {
		issues = append([]Issue{{Number: n, CreatedAt: day0().Add(time.Duration(n) * time.Hour)}}, issues...)
		SortIssues(issues)
		if issues[0].Number != 1 {
			t.Fatalf("after %d newer issues, #%d ranks first", n-1, issues[0].Number)
		}
	}
}
