package mcpserver

import (
	"slices"
	"strings"
	"testing"
)

func ip(n int) *int { return &n }

// Each tool call becomes the command line a person would type, so the
// tool does what that command does.
func TestAToolCallBecomesTheCommandLineTheCLIWouldRun(t *testing.T) {
	must := func(a []string, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	cases := []struct {
		name string
		got  []string
		want string
	}{
		{"status", statusIn{}.args(), "status --json"},
		{"status of wave 0", statusIn{Wave: ip(0), Lane: "side"}.args(), "--lane=side status --json --wave=0"},
		{"pending questions", questionsIn{}.args(), "questions --json --pending"},
		{"every question", questionsIn{All: true}.args(), "questions --json"},
		{"backlog status", backlogStatusIn{Run: "r1"}.args(), "backlog status --json --run=r1"},
		{"plan", backlogPlanIn{Issues: []int{12, 3}, Width: ip(2), Labels: []string{"a b", "c"}}.args(),
			"backlog plan --json --issues=12,3 --width=2 --label=a b --label=c"},
		{"usage", must(usageIn{By: "model", Wave: ip(1), Since: "7d"}.args()), "usage --json --by=model --wave=1 --since=7d"},
		{"run state", must(runStateIn{RunID: "r-1"}.args()), "status --run-id=r-1 --json"},
		{"wait for a run", must(waitIn{RunID: "r-1", TimeoutSeconds: ip(5)}.args()), "wait --run-id=r-1 --timeout-seconds=5 --json"},
		{"wait for a change", must(waitIn{Wave: ip(0)}.args()), "status --wait-change --timeout-seconds=60 --exit-code --json --wave=0"},
		{"launch", must(submitIn{Kind: "launch", StartWave: ip(0), EndWave: ip(2), NoDashboard: true}.args()),
			"submit --json --start-wave=0 --end-wave=2 --no-dashboard"},
		{"resume", must(submitIn{Kind: "resume", Wave: ip(1), Phase: "docs-closure", Agents: []string{"A1"}, NoQueue: true}.args()),
			"submit --json --wave=1 --phase=docs-closure --agent=A1 --no-queue"},
		{"backlog", must(submitIn{Kind: "backlog", Issues: []int{1, 2}, MaxIssues: ip(0), Base: "dev"}.backlogArgs()),
			"--issues=1,2 --max-issues=0 --base=dev"},
		{"answer", must(answerIn{ID: "q-1", Text: "yes", Operator: "ana"}.args()), "answer --operator=ana -- q-1 yes"},
		{"stop the lane", must(stopIn{What: "lane"}.args()), "stop"},
		{"stop an agent", must(stopIn{What: "agent", Agent: "A2"}.args()), "stop --agent=A2"},
		{"finish the backlog", must(stopIn{What: "backlog", Finish: true}.args()), "backlog stop --finish"},
	}
	for _, c := range cases {
		if got := strings.Join(c.got, " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// An answer or id that starts like a flag is still the answer: it comes
// after "--", where no flag is read.
func TestAnAnswerThatLooksLikeAFlagIsStillTheAnswer(t *testing.T) {
	a, err := answerIn{ID: "#12", Text: "--force the v2 API"}.args()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(a, "--")
	if i < 0 || !slices.Equal(a[i+1:], []string{"#12", "--force the v2 API"}) || slices.Contains(a[:i], "--force") {
		t.Fatalf("answer args %q: the id and text must follow --", a)
	}
}

// A field that belongs to another kind of run, a bad enumeration value,
// or a bound outside its range is refused in words naming the field,
// before any command runs.
func TestMisplacedOrOutOfRangeFieldsAreRefusedByName(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"launch with issues", func() error { _, err := submitIn{Kind: "launch", Issues: []int{1}}.args(); return err }(), "kind launch takes no issues"},
		{"backlog with wave", func() error { _, err := submitIn{Kind: "backlog", Wave: ip(1)}.backlogArgs(); return err }(), "kind backlog takes no wave"},
		{"resume without wave", func() error { _, err := submitIn{Kind: "resume"}.args(); return err }(), "kind resume needs wave"},
		{"no kind", func() error { _, err := submitIn{}.args(); return err }(), `kind ""`},
		{"usage by colour", func() error { _, err := usageIn{By: "colour"}.args(); return err }(), "agent, wave, issue, executor, model"},
		{"wait too long", func() error { _, err := waitIn{TimeoutSeconds: ip(601)}.args(); return err }(), "give 1 to 600"},
		{"wait run and wave", func() error { _, err := waitIn{RunID: "r", Wave: ip(0)}.args(); return err }(), "runId or wave"},
		{"answer without text", func() error { _, err := answerIn{ID: "q-1", Text: " "}.args(); return err }(), "text is required"},
		{"stop what", func() error { _, err := stopIn{What: "all"}.args(); return err }(), "give lane, agent or backlog"},
		{"stop agent without id", func() error { _, err := stopIn{What: "agent"}.args(); return err }(), "needs agent"},
		{"tail of nobody", func() error { _, err := tailIn{}.query(); return err }(), "say whose output"},
		{"tail of both", func() error { _, err := tailIn{Issue: ip(1), Agent: "A1"}.query(); return err }(), "not both"},
		{"tail too long", func() error { _, err := tailIn{Lines: ip(501)}.lines(); return err }(), "give 1 to 500"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, c.err, c.want)
		}
	}
}

// Every input schema lists its enumerations and bounds and has no
// "integer or null" types, so the model sees what it may send.
func TestSchemasStateEnumsAndBounds(t *testing.T) {
	s := schemaFor[submitIn](map[string][]string{"kind": submitKind}, map[string][2]float64{"wave": nonNegative})
	if got := s.Properties["kind"].Enum; len(got) != 3 {
		t.Errorf("kind enum %v", got)
	}
	if !slices.Equal(s.Required, []string{"kind"}) {
		t.Errorf("required %v, want only kind", s.Required)
	}
	w := s.Properties["wave"]
	if w.Type != "integer" || len(w.Types) != 0 || w.Minimum == nil || *w.Minimum != 0 {
		t.Errorf("wave schema %+v", w)
	}
}
