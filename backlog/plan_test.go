package backlog

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// day0 is the creation time test issues count from.
func day0() time.Time { return time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC) }

// iss builds an open issue created n days after day0.
func iss(n int, body string, labels ...string) Issue {
	return Issue{Number: n, Title: "issue " + strings.Repeat("x", n%3), Body: body, Labels: labels,
		State: "open", CreatedAt: day0().AddDate(0, 0, n)}
}

func closed(i Issue) Issue { i.State = "closed"; return i }

func TestMakePlan(t *testing.T) {
	asksAPI := iss(6, "Files: api/**", "needs-input")
	asksAPI.Comments = []Comment{{ID: 1, Body: "Which endpoint should this use?"}, {ID: 2, Body: "<!-- wave-orchestrator:claim run=r1 -->"}}
	cases := []struct {
		name       string
		issues     []Issue
		opts       PlanOptions
		groups     [][]int
		width      int
		skipped    []Skip
		needsInput []Question
	}{{
		name:   "bounded keeps the user's order; colliding issues share a group",
		issues: []Issue{iss(12, "Files: a/**"), iss(15, "Files: b.go"), iss(18, "Files: a/x.go")},
		opts:   PlanOptions{Issues: []int{18, 15, 12}},
		groups: [][]int{{18, 12}, {15}}, width: 2,
	}, {
		name:   "bounded reports missing and closed numbers",
		issues: []Issue{iss(1, "Files: a.go"), closed(iss(2, "Files: b.go"))},
		opts:   PlanOptions{Issues: []int{99, 1, 2}},
		groups: [][]int{{1}}, width: 1,
		skipped: []Skip{{99, ReasonMissing, "not returned by the issue source"}, {2, ReasonClosed, "issue is closed"}},
	}, {
		name:   "bounded: a number given twice is planned once",
		issues: []Issue{iss(1, "Files: a.go")},
		opts:   PlanOptions{Issues: []int{1, 1}},
		groups: [][]int{{1}}, width: 1,
	}, {
		name:   "bounded: an empty list plans nothing",
		issues: []Issue{iss(1, "Files: a.go")},
		opts:   PlanOptions{Issues: []int{}},
		groups: [][]int{}, width: 0,
	}, {
		name:   "unbounded: open issues in rank order, closed ones not considered",
		issues: []Issue{iss(3, "Files: c.go"), iss(1, "Files: a.go"), iss(2, "Files: b.go", "P1"), closed(iss(4, "Files: d.go"))},
		groups: [][]int{{2}, {1}, {3}}, width: 3,
	}, {
		name:   "required labels are ANDed, any case",
		issues: []Issue{iss(1, "Files: a.go", "Backlog", "ready"), iss(2, "Files: b.go", "backlog")},
		opts:   PlanOptions{Labels: []string{"backlog", "READY"}},
		groups: [][]int{{1}}, width: 1,
		skipped: []Skip{{2, ReasonLabelMismatch, "lacks label READY"}},
	}, {
		name:   "needs-input goes to the bucket with its question, and is reported skipped",
		issues: []Issue{iss(5, "Files: a.go"), asksAPI},
		groups: [][]int{{5}}, width: 1,
		skipped:    []Skip{{6, ReasonNeedsInput, "Which endpoint should this use?"}},
		needsInput: []Question{{6, asksAPI.Title, "Which endpoint should this use?"}},
	}, {
		name:   "custom needs-input label",
		issues: []Issue{iss(1, "Files: a.go", "Blocked-On-Human"), iss(2, "Files: b.go", "needs-input")},
		opts:   PlanOptions{NeedsInputLabel: "blocked-on-human"},
		groups: [][]int{{2}}, width: 1,
		skipped:    []Skip{{1, ReasonNeedsInput, "issue x"}},
		needsInput: []Question{{1, "issue x", "issue x"}},
	}, {
		name:   "claimed elsewhere: skipped with the holder",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "Files: b.go")},
		opts:   PlanOptions{Claimed: map[int]string{2: "run r7 on host h2"}},
		groups: [][]int{{1}}, width: 1,
		skipped: []Skip{{2, ReasonClaimed, "run r7 on host h2"}},
	}, {
		name:   "done in this run: not planned again",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "Files: b.go")},
		opts:   PlanOptions{Done: map[int]bool{1: true}},
		groups: [][]int{{2}}, width: 1,
		skipped: []Skip{{1, ReasonDone, "already handled in this run"}},
	}, {
		name:   "in flight: the issue itself, and issues colliding with it",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "Files: internal/x/*.go"), iss(3, "", "area:api"), iss(4, "Files: b.go")},
		opts: PlanOptions{InFlight: []InFlight{
			{Issue: 1, Surface: Surface{Globs: []string{"a.go"}}},
			{Issue: 7, Surface: Surface{Globs: []string{"internal/**"}, Areas: []string{"api"}}},
			{Issue: 8, Surface: Surface{Globs: []string{"internal/x/y.go"}}},
		}},
		groups: [][]int{{4}}, width: 1,
		skipped: []Skip{
			{1, ReasonInFlight, "a worker is already on it"},
			{2, ReasonCollidesInFlight, "with #7 (both touch internal/x/*.go and internal/**), #8 (both touch internal/x/*.go and internal/x/y.go)"},
			{3, ReasonCollidesInFlight, "with #7 (both area:api)"},
		},
	}, {
		name:   "an undeclared surface collides with whatever is in flight",
		issues: []Issue{iss(1, "no list here"), iss(2, "Files: b.go")},
		opts:   PlanOptions{InFlight: []InFlight{{Issue: 9, Surface: Surface{Globs: []string{"z.go"}}}}},
		groups: [][]int{{2}}, width: 1,
		skipped: []Skip{{1, ReasonCollidesInFlight, "with #9 (no declared surface (Files:/Surface: list or area: label))"}},
	}, {
		name:   "an undeclared surface joins every group into one",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "nothing"), iss(3, "Files: c.go")},
		groups: [][]int{{1, 2, 3}}, width: 1,
	}, {
		name:   "undeclared parallel: undeclared issues run alone",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "nothing"), iss(3, "Files: c.go"), iss(4, "")},
		opts:   PlanOptions{UndeclaredParallel: true, InFlight: []InFlight{{Issue: 9, Surface: Surface{Globs: []string{"z.go"}}}}},
		groups: [][]int{{1}, {2}, {3}, {4}}, width: 4,
	}, {
		name: "groups are connected components: a chain is one group, ordered by first member",
		issues: []Issue{iss(1, "Files: x.go"), iss(2, "Files: a/*.go"), iss(3, "Files: y.go"),
			iss(4, "Files: a/b.go, c/*.md"), iss(5, "Files: c/d.md"), iss(6, "Files: x.go")},
		groups: [][]int{{1, 6}, {2, 4, 5}, {3}}, width: 3,
	}, {
		name:   "width: at most the option",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "Files: b.go"), iss(3, "Files: c.go")},
		opts:   PlanOptions{Width: 2},
		groups: [][]int{{1}, {2}, {3}}, width: 2,
	}, {
		name: "width: default 5",
		issues: []Issue{iss(1, "Files: 1.go"), iss(2, "Files: 2.go"), iss(3, "Files: 3.go"),
			iss(4, "Files: 4.go"), iss(5, "Files: 5.go"), iss(6, "Files: 6.go")},
		groups: [][]int{{1}, {2}, {3}, {4}, {5}, {6}}, width: 5,
	}, {
		name:   "unbounded cap: the top issues by rank, the rest over-cap",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "Files: a.go"), iss(3, "Files: c.go", "priority:high"), iss(4, "Files: d.go")},
		opts:   PlanOptions{MaxIssues: 2, Done: map[int]bool{4: true}},
		groups: [][]int{{3}, {1}}, width: 2,
		skipped: []Skip{{2, ReasonOverCap, "beyond the cap of 2 issues"}, {4, ReasonDone, "already handled in this run"}},
	}, {
		name:   "bounded ignores the cap: the user named the set",
		issues: []Issue{iss(1, "Files: a.go"), iss(2, "Files: b.go")},
		opts:   PlanOptions{Issues: []int{1, 2}, MaxIssues: 1},
		groups: [][]int{{1}, {2}}, width: 2,
	}, {
		name: "precedence: done, then labels, then claimed, then needs-input",
		issues: []Issue{iss(1, "Files: a.go", "needs-input", "backlog"), iss(2, "Files: b.go", "needs-input"),
			iss(3, "Files: c.go", "needs-input", "backlog"), iss(4, "Files: d.go", "backlog")},
		opts:   PlanOptions{Labels: []string{"backlog"}, Done: map[int]bool{1: true, 2: true}, Claimed: map[int]string{3: "run r2 on host h"}},
		groups: [][]int{{4}}, width: 1,
		skipped: []Skip{{1, ReasonDone, "already handled in this run"}, {2, ReasonDone, "already handled in this run"},
			{3, ReasonClaimed, "run r2 on host h"}},
	}}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := MakePlan(c.issues, c.opts)
			var groups [][]int
			var order []int
			for _, g := range p.Groups {
				groups = append(groups, g.Issues)
				order = append(order, g.Issues...)
			}
			if !reflect.DeepEqual(orEmptyGroups(groups), c.groups) {
				t.Errorf("groups = %v, want %v", groups, c.groups)
			}
			if !slices.Equal(p.Order, orEmptyInts(order)) {
				t.Errorf("order = %v, want the groups flattened %v", p.Order, order)
			}
			if p.Width != c.width {
				t.Errorf("width = %d, want %d", p.Width, c.width)
			}
			if !reflect.DeepEqual(p.Skipped, orEmptySkips(c.skipped)) {
				t.Errorf("skipped = %+v\nwant      %+v", p.Skipped, c.skipped)
			}
			if !reflect.DeepEqual(p.NeedsInput, orEmptyQuestions(c.needsInput)) {
				t.Errorf("needsInput = %+v, want %+v", p.NeedsInput, c.needsInput)
			}
			for _, s := range p.Skipped {
				seen[s.Reason] = true
			}
		})
	}
	for _, r := range []string{ReasonMissing, ReasonClosed, ReasonLabelMismatch, ReasonNeedsInput, ReasonClaimed,
		ReasonCollidesInFlight, ReasonInFlight, ReasonDone, ReasonOverCap} {
		if !seen[r] {
			t.Errorf("no case covers skip reason %q", r)
		}
	}
}

func orEmptyGroups(g [][]int) [][]int {
	if g == nil {
		return [][]int{}
	}
	return g
}

func orEmptyInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}

func orEmptySkips(s []Skip) []Skip {
	if s == nil {
		return []Skip{}
	}
	return s
}

func orEmptyQuestions(q []Question) []Question {
	if q == nil {
		return []Question{}
	}
	return q
}

func TestMakePlanGroupSurfaceIsTheUnion(t *testing.T) {
	p := MakePlan([]Issue{iss(1, "Files: a/*.go", "area:api"), iss(2, "Files: a/b.go, c.md", "area:api", "area:ui")}, PlanOptions{})
	want := Surface{Globs: []string{"a/*.go", "a/b.go", "c.md"}, Areas: []string{"api", "ui"}}
	if len(p.Groups) != 1 || !reflect.DeepEqual(p.Groups[0].Surface, want) {
		t.Fatalf("groups = %+v, want one with surface %+v", p.Groups, want)
	}
}

func TestMakePlanReportsRejectedSurfaceEntries(t *testing.T) {
	p := MakePlan([]Issue{iss(1, "Files: ../secrets, a.go")}, PlanOptions{})
	if len(p.Rejected) != 1 || p.Rejected[0].Issue != 1 || p.Rejected[0].Entry != "../secrets" {
		t.Fatalf("rejected = %+v, want #1's ../secrets", p.Rejected)
	}
}

// The needs-input question and the title are untrusted text: carried
// byte for byte as data, never cut or interpreted.
func TestMakePlanCarriesHostileTextAsData(t *testing.T) {
	long := strings.Repeat("é", 150) + strings.Repeat("#", 149) + "!"
	if n := len([]rune(long)); n != 300 {
		t.Fatalf("title has %d characters", n)
	}
	shell := "$(rm -rf ~) `reboot`; echo \"pwned\" | sh && x > /etc/passwd 'q' \\ \x1b[31m"
	a := iss(1, "", "needs-input")
	a.Title = long
	b := iss(2, "", "needs-input")
	b.Title = shell
	b.Comments = []Comment{{Body: "really? " + shell}}
	p := MakePlan([]Issue{a, b}, PlanOptions{Issues: []int{1, 2}})
	want := []Question{{1, long, long}, {2, shell, "really? " + strings.TrimSpace(shell)}}
	if !reflect.DeepEqual(p.NeedsInput, want) {
		t.Fatalf("needsInput = %+v\nwant         %+v", p.NeedsInput, want)
	}
	var back Plan
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back.NeedsInput, want) {
		t.Fatalf("JSON round trip changed the text: %v %+v", err, back.NeedsInput)
	}
}

func TestPlanJSONKeys(t *testing.T) {
	p := MakePlan([]Issue{iss(1, "Files: a.go", "area:x"), iss(2, "", "needs-input")},
		PlanOptions{Claimed: map[int]string{3: "h"}, Issues: []int{1, 2, 3}})
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"width", "groups", "issues", "surface", "globs", "areas", "order",
		"needsInput", "skipped", "issue", "reason", "detail", "title", "question"} {
		if !strings.Contains(string(raw), `"`+key+`":`) {
			t.Errorf("plan JSON lacks %q: %s", key, raw)
		}
	}
	empty, _ := json.Marshal(MakePlan(nil, PlanOptions{}))
	if want := `{"width":0,"groups":[],"order":[],"needsInput":[],"skipped":[]}`; string(empty) != want {
		t.Errorf("empty plan JSON = %s, want %s (lists, not null)", empty, want)
	}
}

func TestMakePlanIsDeterministicAndLeavesInputAlone(t *testing.T) {
	issues := []Issue{iss(3, "Files: a.go"), iss(1, "Files: b.go", "P0"), iss(2, "Files: a.go")}
	before := slices.Clone(issues)
	p1 := MakePlan(issues, PlanOptions{})
	p2 := MakePlan(issues, PlanOptions{})
	if !reflect.DeepEqual(p1, p2) {
		t.Fatalf("two plans of the same input differ")
	}
	if !reflect.DeepEqual(issues, before) {
		t.Fatalf("MakePlan reordered the caller's slice")
	}
}
