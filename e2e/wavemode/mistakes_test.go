package wavemode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// A user's typo in wave.config.yaml or a wave file is caught by doctor and
// by launch --dry-run, naming the file, the line and the fix, before any
// agent is started (and paid for).

// doctorFails runs doctor and launch --dry-run, wants both to fail with
// every want in their output, and nothing started.
func doctorFails(t *testing.T, r *e2etest.Repo, want ...string) {
	t.Helper()
	ctx := e2etest.Context(t)
	for _, args := range [][]string{{"doctor"}, {"launch", "--dry-run"}} {
		res := r.Run(ctx, args...)
		out := res.Stdout + res.Stderr
		if res.Code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", strings.Join(args, " "), res.Code, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q:\n%s", strings.Join(args, " "), w, out)
			}
		}
	}
	e2etest.NothingStarted(t, r)
}

// withConfig is the test config with body added to the section it names
// (or at the end).
func withConfig(section, body string) string {
	if section == "" {
		return e2etest.Config + body
	}
	return strings.Replace(e2etest.Config, section+":\n", section+":\n"+body, 1)
}

// lineOf is the 1-based line of the first line of text holding s.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("%q not in %q", s, text)
	}
	return strings.Count(text[:i], "\n") + 1
}

func oneAgentWave(r *e2etest.Repo) {
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
}

func TestABudgetCapInTheOtherModesSectionFailsDoctorAtItsLine(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	cfg := withConfig("runtime", "  budget:\n    perIssue: {costUsd: 2.5}\n") + "backlog:\n  budget:\n    lane: {costUsd: 2.5}\n"
	r.Write("wave.config.yaml", cfg)
	oneAgentWave(r)
	doctorFails(t, r,
		fmt.Sprintf("wave.config.yaml:%d: runtime.budget.perIssue: unknown key here", lineOf(t, cfg, "perIssue")),
		"did you mean backlog.budget.perIssue?",
		fmt.Sprintf("wave.config.yaml:%d: backlog.budget.lane: unknown key here", lineOf(t, cfg, "lane: {")),
		"did you mean runtime.budget.lane?")
}

func TestAKeySetTwiceInTheConfigFailsDoctorNamingBothLines(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	cfg := withConfig("runtime", "  timeoutMinutes: 30\n") + "runtime:\n  timeoutMinutes: 300\n"
	r.Write("wave.config.yaml", cfg)
	oneAgentWave(r)
	first, second := lineOf(t, cfg, "runtime:"), strings.LastIndex(cfg, "runtime:")
	doctorFails(t, r, fmt.Sprintf("wave.config.yaml:%d: runtime: duplicate key: also set at %s:%d; keep one",
		strings.Count(cfg[:second], "\n")+1, filepath.Join(r.Root, "wave.config.yaml"), first))
}

// An exit contract typo fails in wave 0, where no validation threshold
// asks for exit contracts: the values are read in every wave.
func TestAnExitContractTypoFailsDoctorAndTheDryRunInEveryWave(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	oneAgentWave(r)
	path := filepath.Join(r.Root, "docs/plans/waves/wave-0.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(strings.Replace(string(b), "- proof: unit\n", "- proof: unitt\n", 1), "- completion: contract\n", "- completion: contractt\n", 1)
	r.Write("docs/plans/waves/wave-0.md", text)
	doctorFails(t, r,
		fmt.Sprintf(`docs/plans/waves/wave-0.md:%d: agent A1: bad-exit-contract: exit contract proof "unitt": want one of unit, integration, live (did you mean "unit"?)`, lineOf(t, text, "unitt")),
		fmt.Sprintf(`docs/plans/waves/wave-0.md:%d: agent A1: bad-exit-contract: exit contract completion "contractt"`, lineOf(t, text, "contractt")))
}

func TestAMisspeltExecutorKeyFailsDoctorWithTheKeyItMeant(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.dealy: 3s")}, e2etest.ClosureAgents()...)...)
	doctorFails(t, r, `agent A1: unknown-executor-key: unknown executor key "local.dealy" (did you mean "local.delay"?)`)
}

func TestAMisnamedWaveFileFailsDoctorWithTheNameItMeant(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	oneAgentWave(r)
	r.Write("docs/plans/waves/wave-one.md", "# Wave 1\n")
	doctorFails(t, r, `docs/plans/waves/wave-one.md: misnamed-wave-file: "wave-one.md" looks like a wave file but only files named wave-<n>.md are waves, so it would never run: rename it wave-1.md, or move it out of docs/plans/waves`)
}

// init's demo wave, copied as wave 6 as a user grows the repository,
// passes doctor under init's config; a threshold rule that does fail
// names the setting that asks for it.
func TestInitsDemoAsWaveSixPassesDoctorAndThresholdErrorsNameTheirKey(t *testing.T) {
	t.Parallel()
	r := bareRepo(t)
	ctx := e2etest.Context(t)
	if res := r.Run(ctx, "init"); res.Code != 0 {
		t.Fatalf("init: exit %d\n%s", res.Code, res.Stderr)
	}
	demo, err := os.ReadFile(filepath.Join(r.Root, "docs/plans/waves/wave-0.md"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("docs/plans/waves/wave-6.md", strings.NewReplacer("wave-0", "wave-6", "Wave 0", "Wave 6", "wave 0", "wave 6").Replace(string(demo)))
	if res := r.Run(ctx, "doctor"); res.Code != 0 {
		t.Fatalf("doctor with the demo as wave 6: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}

	cfgPath := filepath.Join(r.Root, "wave.config.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	on := strings.Replace(string(cfg), "requireContext7DeclarationsFromWave: null", "requireContext7DeclarationsFromWave: 6", 1)
	if on == string(cfg) {
		t.Fatal("init's config does not set requireContext7DeclarationsFromWave")
	}
	r.Write("wave.config.yaml", on)
	res := r.Run(ctx, "doctor")
	want := `agent A1: missing-context7: waves 6 and later need a "### Context7" section (validation.requireContext7DeclarationsFromWave is 6; set it to null in wave.config.yaml to turn this rule off)`
	if res.Code != 1 || !strings.Contains(res.Stdout, want) {
		t.Errorf("doctor with the Context7 rule on: exit %d, want 1 and %q\n%s%s", res.Code, want, res.Stdout, res.Stderr)
	}
}
