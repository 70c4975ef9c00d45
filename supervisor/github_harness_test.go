package supervisor

import (
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/forge/forgetest"
)

// ghFixture is a fixture whose issue source is the fake GitHub: go-github
// against forgetest's httptest server, with the server's Sleeper so rate
// limit waits return at once (and are recorded).
type ghFixture struct {
	*fixture
	srv  *forgetest.Server
	logs *syncBuffer // forge's warnings: rate-limit waits, retries
}

const ghOwner, ghRepo = "acme", "app"

func newGHFixture(t testing.TB) *ghFixture {
	t.Helper()
	g := &ghFixture{fixture: newFixture(t), srv: forgetest.NewServer(t, ghOwner, ghRepo), logs: &syncBuffer{}}
	g.config = ghConfig(g.srv.URL)
	g.newSource = g.client
	return g
}

// client is a new forge.GitHub on the fake, as a new process would make.
func (g *ghFixture) client() forge.Source {
	o := g.srv.Options()
	o.Logger = slog.New(slog.NewTextHandler(g.logs, nil))
	src, err := forge.NewGitHub(o)
	if err != nil {
		g.t.Fatal(err)
	}
	return src
}

func ghConfig(apiURL string) string {
	return strings.Replace(baseConfig, "  source: local\n", "  source: github\n", 1) +
		"github:\n  owner: " + ghOwner + "\n  repo: " + ghRepo + "\n  apiUrl: " + apiURL + "\n"
}

// ghIssue opens issue n on the fake GitHub.
func (g *ghFixture) ghIssue(n int, title, body string, labels ...string) {
	g.srv.AddIssue(backlog.Issue{Number: n, Title: title, Body: body, Labels: labels})
}

// markers counts issue n's comments carrying the marker of kind.
func (g *ghFixture) markers(n int, kind string) int {
	return countMarker(g.srv.Comments(n), "<!-- wave-orchestrator:"+kind+" run=")
}

// prsInto are the pull requests whose base is base.
func (g *ghFixture) prsInto(base string) []forge.PR {
	var out []forge.PR
	for _, p := range g.srv.PRs() {
		if p.Base == base {
			out = append(out, p)
		}
	}
	return out
}

func (g *ghFixture) hasLabel(n int, label string) bool {
	is, ok := g.srv.Issue(n)
	return ok && slices.Contains(is.Labels, label)
}

// noDuplicateWrites fails when the mutation log shows a write made twice:
// two PRs head→base, two comments of the supervisor's with one marker, a
// label added twice.
func (g *ghFixture) noDuplicateWrites(t *testing.T) {
	t.Helper()
	prs := map[string]int{}
	for _, p := range g.srv.PRs() {
		prs[p.Head+" → "+p.Base]++
	}
	for k, c := range prs {
		if c > 1 {
			t.Errorf("%d pull requests %s, want at most 1", c, k)
		}
	}
	marker := regexp.MustCompile(`<!-- wave-orchestrator:[^>]*-->`)
	for _, m := range g.srv.MutationsOn(forgetest.RouteCommentCreate) {
		seen := map[string]int{}
		for _, c := range g.srv.Comments(m.Issue) {
			if c.Author != forgetest.Login {
				continue // planted by someone else: not a write of ours
			}
			for _, mk := range marker.FindAllString(c.Body, -1) {
				seen[mk]++
			}
		}
		for mk, c := range seen {
			if c > 1 {
				t.Errorf("#%d has %d comments with marker %s, want 1", m.Issue, c, mk)
			}
		}
	}
	added := map[string]int{}
	for _, m := range g.srv.MutationsOn(forgetest.RouteLabelsAdd) {
		if !strings.HasSuffix(m.Summary, "(new [])") {
			added[fmt.Sprintf("#%d %s", m.Issue, m.Summary)]++
		}
	}
	for k, c := range added {
		if c > 1 {
			t.Errorf("label write %s applied %d times", k, c)
		}
	}
}

// mutationIndex is the position of the first mutation matching route and
// issue at or after from, or -1.
func mutationIndex(ms []forgetest.Mutation, from int, route string, issue int) int {
	for i := from; i < len(ms); i++ {
		if ms[i].Route == route && (issue == 0 || ms[i].Issue == issue) {
			return i
		}
	}
	return -1
}

// closesRefs are the issue numbers a PR body would close on GitHub
// (close/closes/closed/fix/fixes/fixed/resolve/resolves/resolved, then #n
// or owner/repo#n), in order; text inside code spans does not count, as
// on GitHub.
func closesRefs(body string) []int {
	re := regexp.MustCompile(`(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+(?:[\w.-]+/[\w.-]+)?#(\d+)`)
	var out []int
	for _, m := range re.FindAllStringSubmatch(stripCodeSpans(body), -1) {
		var n int
		fmt.Sscan(m[1], &n)
		out = append(out, n)
	}
	return out
}

// stripCodeSpans removes markdown code spans: a run of k backticks up to
// the next run of exactly k.
func stripCodeSpans(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		k := 0
		for i+k < len(s) && s[i+k] == '`' {
			k++
		}
		end := -1
		for j := i + k; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(s) && s[j+m] == '`' {
				m++
			}
			if m == k {
				end = j + m
				break
			}
			j += m
		}
		if end < 0 { // an unmatched run is literal text
			b.WriteString(s[i : i+k])
			i += k
			continue
		}
		i = end
	}
	return b.String()
}

var allRoutes = []string{forgetest.RouteRepoGet, forgetest.RouteIssuesList, forgetest.RouteIssueGet, forgetest.RouteIssueEdit,
	forgetest.RouteLabelsAdd, forgetest.RouteLabelRemove, forgetest.RouteCommentsList, forgetest.RouteCommentCreate,
	forgetest.RoutePullsList, forgetest.RoutePullCreate, forgetest.RoutePullGet, forgetest.RoutePullEdit, forgetest.RouteRateLimit,
	forgetest.RouteUser}

// routeCounts is "route=n ..." for every route that was called.
func (g *ghFixture) routeCounts() string {
	var parts []string
	for _, r := range allRoutes {
		if c := g.srv.Count(r); c > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", r, c))
		}
	}
	return strings.Join(parts, " ")
}
