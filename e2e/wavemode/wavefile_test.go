package wavemode

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// envAgentScript lands the agent's deliverable, prints the sticky key it
// was given and its markers.
const envAgentScript = `#!/bin/sh
mkdir -p src && echo done > "src/$1.txt"
echo "sticky=$LPM_AUTH_STICKY_KEY"
echo '[wave-proof] completion=contract durability=none proof=unit state=met'
echo '[wave-doc-delta] state=owned'
`

// Every agent run gets LPM_AUTH_STICKY_KEY=wave:<lane>:<wave>:<attempt>:<agent>
// in its environment, and a value the wave file sets for the agent wins.
func TestAgentsGetAStickyKeyUnlessOneIsConfigured(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("agent.sh", envAgentScript)
	a1 := e2etest.ImplAgent("A1", "id: shell", "shell.command: sh agent.sh a1")
	a2 := e2etest.ImplAgent("A2", "id: shell", "shell.command: sh agent.sh a2", "env.LPM_AUTH_STICKY_KEY: pinned-by-user")
	r.WriteWave(0, append([]e2etest.Agent{a1, a2}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for id, want := range map[string]string{"A1": "sticky=wave:main:0:1:A1", "A2": "sticky=pinned-by-user"} {
		log, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, id, 1), "agent.log"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(e2etest.Lines(string(log)), func(l string) bool { return strings.TrimRight(l, "\r") == want }) {
			t.Errorf("%s's log lacks %q:\n%s", id, want, log)
		}
	}
}

// A sticky key set in the environment the launch runs in is the user's:
// agents get it instead of the generated one, and one configured for an
// agent still wins over it.
func TestAStickyKeyInTheLaunchEnvironmentWinsOverTheGeneratedOne(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("agent.sh", envAgentScript)
	a1 := e2etest.ImplAgent("A1", "id: shell", "shell.command: sh agent.sh a1")
	a2 := e2etest.ImplAgent("A2", "id: shell", "shell.command: sh agent.sh a2", "env.LPM_AUTH_STICKY_KEY: pinned-by-user")
	r.WriteWave(0, append([]e2etest.Agent{a1, a2}, e2etest.ClosureAgents()...)...)
	cmd := r.Command(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	cmd.Env = append(cmd.Env, "LPM_AUTH_STICKY_KEY=from-the-launch")
	if res := e2etest.RunCmd(t, cmd); res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for id, want := range map[string]string{"A1": "sticky=from-the-launch", "A2": "sticky=pinned-by-user"} {
		log, err := os.ReadFile(filepath.Join(r.Layout().RunDir(0, id, 1), "agent.log"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(e2etest.Lines(string(log)), func(l string) bool { return strings.TrimRight(l, "\r") == want }) {
			t.Errorf("%s's log lacks %q:\n%s", id, want, log)
		}
	}
}

// Each run directory holds launch-preview.json with the resolved limits,
// live and in dry-run, and the turn limit names where it came from.
func TestLaunchPreviewRecordsLimitsAndTheirSources(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "budget.turns: 7", "budget.minutes: 20"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := r.Run(e2etest.Context(t), "launch", "--lane", "main", "--dry-run"); res.Code != 0 {
		t.Fatalf("dry-run exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var dry launcher.LaunchPreview
	e2etest.ReadJSONFile(t, filepath.Join(r.Layout().DryRun().RunDir(0, "A1", 1), launcher.PreviewFile), &dry)
	if dry.AgentID != "A1" || dry.ExecutorID != "local" || dry.Limits.DeadlineMinutes != 20 || dry.Limits.DeadlineSource != "agent budget.minutes" ||
		dry.Limits.TurnLimitSource != "not-applicable" || len(dry.Limits.Notes) != 1 {
		t.Fatalf("dry-run preview %+v", dry)
	}
	if res := e2etest.Launch(t, r, "--timeout-minutes", "45"); res.Code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	var live launcher.LaunchPreview
	e2etest.ReadJSONFile(t, filepath.Join(r.Layout().RunDir(0, "A2", 1), launcher.PreviewFile), &live)
	if live.Limits.DeadlineMinutes != 45 || live.Limits.DeadlineSource != "flag --timeout-minutes" || live.Env["WAVE_AGENT_ID"] != "A2" ||
		live.Env["LPM_AUTH_STICKY_KEY"] != "wave:main:0:1:A2" {
		t.Fatalf("live preview %+v", live)
	}
}

// A retry whose only fallback is held back by the lane's runtime mix
// target stops the wave (exit 43), and `status --json` reports
// retry-fallback-blocked for the agent, the code the launch printed.
func TestStatusReportsAFallbackBlockedByTheRuntimeMix(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("wave.config.yaml", strings.Replace(e2etest.Config, "executors:\n  default: local\n",
		"executors:\n  default: local\nruntimePolicy:\n  runtimeMixTargets:\n    local: 3\n", 1))
	a1 := e2etest.ImplAgent("A1", "id: shell", "shell.command: sh -c no-such-agent-cli-xyz", "fallbacks: local", "retry-policy: fallback-allowed")
	r.WriteWave(0, append([]e2etest.Agent{a1}, e2etest.ClosureAgents()...)...)
	res := e2etest.Launch(t, r)
	if res.Code != 43 || !strings.Contains(res.Stdout, "A1 fallback to local blocked (retry-fallback-blocked)") {
		t.Fatalf("exit %d, want 43 with the blocked fallback named\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	l := r.Status(t)
	w := l.FindWave(0)
	if w == nil {
		t.Fatal("status has no wave 0")
	}
	if !slices.ContainsFunc(w.Failures, func(f state.Failure) bool {
		return f.AgentID == "A1" && f.StatusCode == state.CodeFallbackBlocked && strings.Contains(f.Detail, "local")
	}) {
		t.Fatalf("status --json failures %+v lack A1 %s", w.Failures, state.CodeFallbackBlocked)
	}
}

// completedWave runs a passing wave 0 of A1, A2 and closure, and returns
// the number of events before a following command.
func completedWave(t *testing.T) (*e2etest.Repo, int) {
	t.Helper()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1"), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("first run exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	return r, len(r.Events())
}

// `resume --agent A1` on a completed wave reruns the proven A1 and then
// closure; A2 is reused.
func TestResumeAgentRerunsAProvenAgent(t *testing.T) {
	t.Parallel()
	r, before := completedWave(t)
	res := r.Run(e2etest.Context(t), "resume", "--lane", "main", "--wave", "0", "--agent", "A1", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if got := e2etest.StartOrder(r.Events()[before:]); !slices.Equal(got, []string{"A1", "A8", "A9", "A0"}) {
		t.Fatalf("resume ran %v, want A1 then closure A8 A9 A0", got)
	}
}

// `resume --rerun-proven` reuses no proven agent: both implementation
// agents run again, then closure.
func TestResumeRerunProvenRerunsEveryImplementationAgent(t *testing.T) {
	t.Parallel()
	r, before := completedWave(t)
	res := r.Run(e2etest.Context(t), "resume", "--lane", "main", "--wave", "0", "--rerun-proven", "--no-dashboard")
	if res.Code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	evs := r.Events()[before:]
	launched, _ := e2etest.AgentStarts(evs)
	if launched["A1"] != 1 || launched["A2"] != 1 || launched["A0"] != 1 {
		t.Fatalf("resume launched %v, want A1, A2 and closure once each", launched)
	}
	for _, ev := range evs {
		if ev.EntityType == state.EntityAgentRun && ev.Action == state.AgentReused {
			t.Fatalf("an agent was reused: %+v", ev.Data)
		}
	}
}

// A resume naming an agent the wave lacks, or --rerun-proven with a
// closure phase, is a usage error (exit 2) that starts nothing.
func TestResumeRefusesABadRerunRequest(t *testing.T) {
	t.Parallel()
	r, before := completedWave(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--agent", "A7"}, `wave 0 has no agent "A7" (--agent); its agents are A1, A2, A8, A9, A0`},
		{[]string{"--phase", "security-review", "--rerun-proven"}, "--rerun-proven reruns implementation agents"},
	} {
		res := r.Run(e2etest.Context(t), append([]string{"resume", "--lane", "main", "--wave", "0", "--no-dashboard"}, tc.args...)...)
		if res.Code != 2 || !strings.Contains(res.Stderr, tc.want) {
			t.Fatalf("resume %v: exit %d, want 2 saying %q\n%s", tc.args, res.Code, tc.want, res.Stderr)
		}
	}
	if n := len(r.Events()); n != before {
		t.Fatalf("a refused resume wrote %d events", n-before)
	}
}

// A component marker mangled on its way into the log (trailing commas)
// while it carries every value does not fail the wave: the launcher
// accepts it on adjudication, warns, and records it in summary.json.
func TestMangledComponentMarkerIsAdjudicated(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.Write("agent.sh", `#!/bin/sh
mkdir -p src && echo done > src/a1.txt
echo '[wave-proof] completion=contract durability=none proof=unit state=met'
echo '[wave-doc-delta] state=owned'
echo '[wave-component] component=api, level=repo-landed, state=met,'
`)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: shell", "shell.command: sh agent.sh")}, e2etest.ClosureAgents()...)...)
	path := filepath.Join(r.Root, "docs/plans/waves/wave-0.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "## Agent A1", "## Component promotions\n- api: repo-landed\n\n## Agent A1", 1)
	text = strings.Replace(text, "### Exit contract", "### Components\n- api\n\n### Exit contract", 1)
	r.Write("docs/plans/waves/wave-0.md", text)
	res := e2etest.Launch(t, r)
	if res.Code != 0 {
		t.Fatalf("exit %d, want the wave to pass\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "warning: A1's component api marker was malformed") {
		t.Fatalf("no adjudication warning:\n%s", res.Stdout)
	}
	var sum struct {
		Adjudicated []struct {
			Kind, ComponentID string
		} `json:"adjudicated"`
	}
	e2etest.ReadJSONFile(t, filepath.Join(r.Layout().RunDir(0, "A1", 1), "summary.json"), &sum)
	if len(sum.Adjudicated) != 1 || sum.Adjudicated[0].ComponentID != "api" {
		t.Fatalf("summary.json adjudicated %+v", sum.Adjudicated)
	}
}
