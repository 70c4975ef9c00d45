package executor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// A claude agent with budget.costUsd gets the CLI's own cap too
// (--max-budget-usd, which claude 2.1.197 has), as budget.turns becomes
// --max-turns: the CLI stops itself at the figure the runner would stop
// it at. Without a cost budget the flag is not passed.
func TestClaudeIsGivenItsCostBudgetAsItsOwnCap(t *testing.T) {
	for _, c := range []struct {
		budget *wave.Budget
		want   []string
	}{
		{&wave.Budget{Turns: ptr(30), CostUSD: new(2.5)}, []string{"--max-turns", "30", "--max-budget-usd", "2.5"}},
		{&wave.Budget{CostUSD: new(10.0)}, []string{"--max-budget-usd", "10"}},
		{&wave.Budget{Turns: ptr(5)}, nil},
	} {
		root, run := t.TempDir(), t.TempDir()
		promptPath := filepath.Join(run, "prompt.md")
		if err := os.WriteFile(promptPath, []byte("work\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		a := implAgent()
		a.Executor = &wave.ExecutorConfig{ID: ptr(Claude), Budget: c.budget}
		lane := testLane(root)
		r, err := Resolve(&a, "implementation", lane, "", false)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := Build(BuildInput{Agent: &a, Wave: testWave(), Resolved: r, Lane: lane, RunDir: run, PromptPath: promptPath,
			LogPath: filepath.Join(run, "agent.log"), Attempt: 1, Self: "/bin/true"})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(spec.Argv, "--max-budget-usd")
		switch {
		case c.want == nil && i >= 0:
			t.Errorf("budget %+v: argv %q has --max-budget-usd", c.budget, spec.Argv)
		case c.want != nil && (i < 0 || spec.Argv[i+1] != c.want[len(c.want)-1]):
			t.Errorf("budget %+v: argv %q, want %q in it", c.budget, spec.Argv, c.want)
		}
	}
}
