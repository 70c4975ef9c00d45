package spend

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// Groupings of `usage --by`.
var Groupings = []string{"agent", "wave", "issue", "executor", "model"}

// Row is one group's spend.
type Row struct {
	Key   string      `json:"key"`
	Runs  int         `json:"runs"`
	Usage usage.Usage `json:"usage"`
}

// Filter keeps the runs of wave (nil: every wave; backlog runs have none)
// started at or after since (zero: any time).
func Filter(runs []Run, wave *int, since time.Time) []Run {
	var out []Run
	for _, r := range runs {
		if wave != nil && (r.Wave == nil || *r.Wave != *wave) {
			continue
		}
		if !since.IsZero() && (r.StartedAt == nil || r.StartedAt.Before(since)) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Group sums runs by one of Groupings, rows in key order.
func Group(runs []Run, by string) ([]Row, error) {
	if !slices.Contains(Groupings, by) {
		return nil, fmt.Errorf("--by %q: want one of %s", by, strings.Join(Groupings, ", "))
	}
	idx := map[string]int{}
	var rows []Row
	for _, r := range runs {
		k := key(r, by)
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, Row{Key: k})
		}
		rows[i].Runs++
		if r.Usage != nil {
			rows[i].Usage = usage.Add(rows[i].Usage, *r.Usage)
		}
	}
	slices.SortFunc(rows, func(a, b Row) int { return compareKeys(a.Key, b.Key) })
	return rows, nil
}

func key(r Run, by string) string {
	switch by {
	case "agent":
		if r.Kind == KindBacklog {
			return issueKey(r) + " " + r.Agent
		}
		return fmt.Sprintf("wave %d %s", *r.Wave, r.Agent)
	case "wave":
		if r.Wave == nil {
			return "backlog " + r.BacklogRun
		}
		return "wave " + strconv.Itoa(*r.Wave)
	case "issue":
		if r.Issue == nil {
			return "(wave runs)"
		}
		return issueKey(r)
	case "executor":
		return orUnknown(r.Executor)
	}
	return orUnknown(r.Model())
}

func issueKey(r Run) string { return "#" + strconv.Itoa(*r.Issue) }

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// compareKeys orders "#2" before "#10" and "wave 2" before "wave 10".
func compareKeys(a, b string) int {
	na, nb := numTail(a), numTail(b)
	if pa, pb := strings.TrimRight(a, "0123456789"), strings.TrimRight(b, "0123456789"); pa == pb && na >= 0 && nb >= 0 {
		return na - nb
	}
	return strings.Compare(a, b)
}

func numTail(s string) int {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	if err != nil {
		return -1
	}
	return n
}

// ParseSince reads --since: a Go duration (36h) or a number of days (7d).
func ParseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("--since %q: want a duration such as 7d or 36h", s)
		}
		return now.Add(-time.Duration(n) * 24 * time.Hour), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("--since %q: want a duration such as 7d or 36h", s)
	}
	return now.Add(-d), nil
}
