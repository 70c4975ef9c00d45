package backlog

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// backlog500 is a deterministic backlog of 500 issues with mixed
// surfaces: package directories, single files, globs across the tree,
// area labels, a few undeclared and needs-input issues, and priorities.
func backlog500() []Issue {
	rng := rand.New(rand.NewPCG(500, 1))
	pkgs := make([]string, 60)
	for i := range pkgs {
		pkgs[i] = fmt.Sprintf("internal/pkg%02d", i)
	}
	entry := func() string {
		p := pkgs[rng.IntN(len(pkgs))]
		switch rng.IntN(8) {
		case 0:
			return p + "/"
		case 1:
			return p + "/*.go"
		case 2:
			return fmt.Sprintf("%s/file%d.go", p, rng.IntN(20))
		case 3:
			return fmt.Sprintf("%s/**/*_test.go", p)
		case 4:
			return fmt.Sprintf("docs/%c*.md", 'a'+rune(rng.IntN(26)))
		case 5:
			return fmt.Sprintf("cmd/tool%d/main.go", rng.IntN(30))
		case 6:
			return fmt.Sprintf("%s/[a-m]*.go", p)
		default:
			return fmt.Sprintf("%s/sub%d/", p, rng.IntN(5))
		}
	}
	prios := []string{"P0", "P1", "priority:medium", "priority:low", "", "", ""}
	issues := make([]Issue, 500)
	for i := range issues {
		var labels []string
		if l := prios[rng.IntN(len(prios))]; l != "" {
			labels = append(labels, l)
		}
		if rng.IntN(10) < 3 {
			labels = append(labels, fmt.Sprintf("area:a%d", rng.IntN(15)))
		}
		if rng.IntN(40) == 0 {
			labels = append(labels, "needs-input")
		}
		var body strings.Builder
		fmt.Fprintf(&body, "Issue %d.\n\n", i+1)
		if rng.IntN(20) != 0 {
			body.WriteString("Files:\n")
			for range 1 + rng.IntN(4) {
				fmt.Fprintf(&body, "- `%s`\n", entry())
			}
		}
		issues[i] = Issue{Number: i + 1, Title: fmt.Sprintf("issue %d", i+1), Body: body.String(), Labels: labels,
			State: "open", CreatedAt: day0().Add(time.Duration(rng.IntN(5000)) * time.Hour)}
	}
	return issues
}

func BenchmarkPlan500(b *testing.B) {
	issues := backlog500()
	opts := PlanOptions{
		UndeclaredParallel: true,
		MaxIssues:          200,
		InFlight: []InFlight{
			{Issue: 9001, Surface: Surface{Globs: []string{"internal/pkg03/**"}}},
			{Issue: 9002, Surface: Surface{Areas: []string{"a7"}}},
		},
		Claimed: map[int]string{10: "run r on host h"},
		Done:    map[int]bool{11: true},
	}
	p := MakePlan(issues, opts)
	b.ReportMetric(float64(len(p.Groups)), "groups")
	b.ReportAllocs()
	for b.Loop() {
		MakePlan(issues, opts)
	}
}

// BenchmarkPlan500Disjoint is the worst case for the collision graph:
// every glob distinct and no two issues colliding, so every pair is
// decided and nothing is joined early.
func BenchmarkPlan500Disjoint(b *testing.B) {
	issues := make([]Issue, 500)
	for i := range issues {
		issues[i] = iss(i+1, fmt.Sprintf("Files: src/m%d/*.go, src/m%d/[a-z]*_test.go, docs/m%d.md", i, i, i))
	}
	p := MakePlan(issues, PlanOptions{})
	if len(p.Groups) != 500 {
		b.Fatalf("%d groups, want 500", len(p.Groups))
	}
	b.ReportAllocs()
	for b.Loop() {
		MakePlan(issues, PlanOptions{})
	}
}
