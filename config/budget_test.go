package config

import (
	"strings"
	"testing"
)

func TestPricingAndBudgetsLoad(t *testing.T) {
	dir := yamlRepo(t, `pricing:
  asOf: "2026-11-30"
  models:
    my-model: {input: 2, output: 8, cacheRead: 0.2, cacheWrite: 2.5}
runtime:
  budget:
    wave: {tokens: 500000}
    lane: {costUsd: 25}
    warnAtPercent: 90
    onExceeded: stop
backlog:
  budget:
    perIssue: {costUsd: 2.5}
    run: {tokens: 2000000, costUsd: 40}
executors:
  profiles:
    cheap: {id: claude, budget: {minutes: 30, tokens: 100000, costUsd: 1.5}}
`)
	c := mustLoad(t, dir, nil)
	l := mustLane(t, c, dir, "main")
	if pr, ok := l.Pricing.Lookup("my-model"); !ok || pr.Output != 8 || l.Pricing.AsOf != "2026-11-30" {
		t.Fatalf("pricing %+v", l.Pricing)
	}
	if _, ok := l.Pricing.Lookup("claude-sonnet-4-5"); !ok {
		t.Fatal("defaults lost by the merge")
	}
	b := l.Runtime.Budget
	if *b.Wave.Tokens != 500000 || *b.Lane.CostUSD != 25 || b.Warn() != 90 || !b.Stops() {
		t.Fatalf("runtime.budget %+v", b)
	}
	if bb := c.Backlog.Budget; *bb.PerIssue.CostUSD != 2.5 || *bb.Run.Tokens != 2000000 || bb.Warn() != 80 || bb.Stops() {
		t.Fatalf("backlog.budget %+v", bb)
	}
	if cp := l.Executors.Profiles["cheap"].Budget.Cap(); *cp.Tokens != 100000 || *cp.CostUSD != 1.5 {
		t.Fatalf("profile cap %+v", cp)
	}
}

func TestBadBudgetsAreNamed(t *testing.T) {
	dir := yamlRepo(t, "runtime:\n  budget:\n    wave: {tokens: -1}\n    onExceeded: explode\n")
	c, err := Load(dir, mapEnv(nil))
	if err == nil {
		_, err = c.Lane(dir, "main")
	}
	if err == nil || !strings.Contains(err.Error(), "runtime.budget.wave.tokens") || !strings.Contains(err.Error(), "runtime.budget.onExceeded") {
		t.Fatalf("err %v", err)
	}
}

// Each budget section takes only its own caps: a lane cap under
// backlog.budget or a per-issue cap under runtime.budget is an unknown
// key at its line, naming where it belongs, never a cap silently ignored.
func TestABudgetCapInTheWrongSectionIsAnErrorAtItsLine(t *testing.T) {
	dir := yamlRepo(t, "runtime:\n  budget:\n    perIssue: {costUsd: 1}\n    wave: {tokens: 10}\nbacklog:\n  budget:\n    lane: {costUsd: 2.5}\n    run: {tokens: 10}\n")
	_, err := Load(dir, mapEnv(nil))
	if err == nil {
		t.Fatal("misplaced budget caps loaded")
	}
	for _, want := range []string{
		"wave.config.yaml:3: runtime.budget.perIssue: unknown key here: this section takes lane, onExceeded, warnAtPercent, wave; did you mean backlog.budget.perIssue?",
		"wave.config.yaml:7: backlog.budget.lane: unknown key here: this section takes onExceeded, perIssue, run, warnAtPercent; did you mean runtime.budget.lane?",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 2 {
		t.Errorf("%d problems, want 2 (the sections' own keys are fine):\n%v", n, err)
	}
}
