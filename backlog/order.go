package backlog

import (
	"slices"
	"strings"
)

// Priority ranks, highest first. Unprioritised issues come after the
// lowest priority.
const (
	PriorityCritical = 0 // P0, priority:critical
	PriorityHigh     = 1 // P1, priority:high
	PriorityMedium   = 2 // P2, priority:medium
	PriorityLow      = 3 // P3, priority:low
	PriorityNone     = 4 // no priority label
)

// Priority returns the highest priority among an issue's labels (any
// case): P0..P3, priority:critical|high|medium|low, or priority:p0..p3
// (the local source maps front matter "priority: P1" onto that label).
func Priority(labels []string) int {
	best := PriorityNone
	for _, l := range labels {
		if r, ok := priorityOf(strings.ToLower(strings.TrimSpace(l))); ok {
			best = min(best, r)
		}
	}
	return best
}

func priorityOf(label string) (int, bool) {
	name, prefixed := strings.CutPrefix(label, "priority:")
	name = strings.TrimSpace(name)
	switch name {
	case "p0":
		return PriorityCritical, true
	case "p1":
		return PriorityHigh, true
	case "p2":
		return PriorityMedium, true
	case "p3":
		return PriorityLow, true
	}
	if !prefixed {
		return 0, false
	}
	switch name {
	case "critical":
		return PriorityCritical, true
	case "high":
		return PriorityHigh, true
	case "medium":
		return PriorityMedium, true
	case "low":
		return PriorityLow, true
	}
	return 0, false
}

// SortIssues sorts into rank order: priority, then oldest first, then
// number. Oldest-first within a priority is what keeps the order FIFO
// with aging: a newer issue never overtakes an older one of the same
// priority. An issue with no creation time ranks after dated ones of its
// priority, so an unknown age never jumps the queue.
func SortIssues(issues []Issue) {
	slices.SortStableFunc(issues, compareRank)
}

func compareRank(a, b Issue) int {
	if pa, pb := Priority(a.Labels), Priority(b.Labels); pa != pb {
		return pa - pb
	}
	switch az, bz := a.CreatedAt.IsZero(), b.CreatedAt.IsZero(); {
	case az && !bz:
		return 1
	case bz && !az:
		return -1
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return a.Number - b.Number
}
