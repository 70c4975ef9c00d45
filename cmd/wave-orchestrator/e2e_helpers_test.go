package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/tmuxtest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// binPath is the wave-orchestrator binary built once by TestMain; the
// runner and the local agent are that binary, so end-to-end tests run it.
var binPath string

// tmuxTmp is the TMUX_TMPDIR every test's tmux servers live under.
var tmuxTmp string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	defer kubeCluster.Stop()
	return tmuxtest.Run(m, func(dir string) error {
		tmuxTmp = dir
		binPath = filepath.Join(dir, "wave-orchestrator")
		// The release build (.ci/run makes the same one first, so in CI
		// this is a cache hit): TestStaticBuild and the version tests
		// check this binary instead of building their own.
		build := exec.Command("go", "build", "-trimpath", "-buildvcs=auto", "-o", binPath, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build: %v\n%s", err, out)
		}
		return nil
	})
}

// testRepo is a scratch repository with a config, role prompts and waves.
type testRepo struct {
	t    *testing.T
	root string
}

const testConfig = `defaultLane: main
executors:
  default: local
runtime:
  heartbeatIntervalMs: 200
  terminateGraceMs: 500
validation:
  requireDocumentationStewardFromWave: null
  requireContext7DeclarationsFromWave: null
  requireExitContractsFromWave: null
  requireIntegrationStewardFromWave: null
  requireComponentPromotionsFromWave: null
  requireAgentComponentsFromWave: null
  requiredPromptReferences: []
`

func newRepo(t *testing.T) *testRepo {
	t.Helper()
	root := t.TempDir()
	r := &testRepo{t: t, root: root}
	r.write("wave.config.yaml", testConfig)
	for _, role := range []string{"cont-qa", "cont-eval", "integration", "documentation", "security", "design"} {
		r.write("docs/agents/wave-"+role+"-role.md", "# "+role+" role\n\n## Standing prompt\n\n```text\nYou hold the "+role+" role for this wave.\n```\n")
	}
	git := exec.Command("git", "init", "-q", root)
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	t.Cleanup(func() { r.cleanupTmux() })
	return r
}

func (r *testRepo) write(rel, body string) {
	r.t.Helper()
	p := filepath.Join(r.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) layout() lanes.Layout { return lanes.New(r.root, ".wave", "", "main") }

func (r *testRepo) cleanupTmux() {
	_ = exec.Command("tmux", "-L", r.layout().Socket(), "kill-server").Run()
}

// agentSpec describes one agent of a generated wave file.
type agentSpec struct {
	id, title  string
	rolePrompt string   // e.g. docs/agents/wave-cont-qa-role.md
	owns       []string // owned paths; the first is also the deliverable of implementation agents
	knobs      []string // extra `### Executor` bullets, e.g. "local.fail-attempts: 1"
	impl       bool
	prompt     string
	docImpact  string // exit contract doc-impact, default owned
}

func implAgent(id string, knobs ...string) agentSpec {
	return agentSpec{id: id, title: "Part " + id, owns: []string{"src/" + strings.ToLower(id) + ".txt"}, knobs: knobs, impl: true}
}

func closureAgents() []agentSpec {
	return []agentSpec{
		{id: "A8", title: "Integration Steward", rolePrompt: "docs/agents/wave-integration-role.md", owns: []string{"docs/reports/integration-0.md"}},
		{id: "A9", title: "Documentation Steward", rolePrompt: "docs/agents/wave-documentation-role.md", owns: []string{"docs/plans/current-state.md"}},
		{id: "A0", title: "cont-QA", rolePrompt: "docs/agents/wave-cont-qa-role.md", owns: []string{"docs/plans/waves/reviews/wave-0-cont-qa.md"}},
	}
}

func securityAgent(knobs ...string) agentSpec {
	return agentSpec{id: "S1", title: "Security Review", rolePrompt: "docs/agents/wave-security-role.md", owns: []string{"docs/security/wave-0-security.md"}, knobs: knobs}
}

func (r *testRepo) writeWave(n int, agents ...agentSpec) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Wave %d - end to end\n\n**Commit message**: `Test: wave %d`\n\n", n, n)
	for _, a := range agents {
		fmt.Fprintf(&b, "## Agent %s: %s\n\n", a.id, a.title)
		if a.rolePrompt != "" {
			fmt.Fprintf(&b, "### Role prompts\n- %s\n\n", a.rolePrompt)
		}
		b.WriteString("### Executor\n")
		if !slices.ContainsFunc(a.knobs, func(k string) bool { return strings.HasPrefix(k, "id:") }) {
			b.WriteString("- id: local\n")
		}
		for _, k := range a.knobs {
			fmt.Fprintf(&b, "- %s\n", k)
		}
		b.WriteString("\n")
		if a.impl {
			doc := a.docImpact
			if doc == "" {
				doc = "owned"
			}
			fmt.Fprintf(&b, "### Exit contract\n- completion: contract\n- durability: none\n- proof: unit\n- doc-impact: %s\n\n", doc)
			fmt.Fprintf(&b, "### Deliverables\n- %s\n\n", a.owns[0])
		}
		prompt := a.prompt
		if prompt == "" {
			prompt = "Do the work of " + a.title + "."
		}
		fmt.Fprintf(&b, "### Prompt\n```text\n%s\n\nFile ownership (only touch these paths):\n", prompt)
		for _, o := range a.owns {
			fmt.Fprintf(&b, "- %s\n", o)
		}
		b.WriteString("```\n\n")
	}
	r.write(fmt.Sprintf("docs/plans/waves/wave-%d.md", n), b.String())
}

// result of one CLI invocation.
type result struct {
	code           int
	stdout, stderr string
}

func (r *testRepo) run(ctx context.Context, args ...string) result {
	r.t.Helper()
	return runCmd(r.t, r.command(ctx, args...))
}

func (r *testRepo) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binPath, append([]string{"--repo-root", r.root}, args...)...)
	cmd.Dir = r.root
	cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+tmuxTmp)
	return cmd
}

func (r *testRepo) events() []state.Event {
	r.t.Helper()
	evs, bad, err := state.ReadEvents(r.layout().EventsPath())
	if err != nil || len(bad) > 0 {
		r.t.Fatalf("events: %v %v", err, bad)
	}
	return evs
}

// agentStarts counts agent_run started events per agent (adopted runs are
// not launches and are counted separately).
func agentStarts(evs []state.Event) (launched, adopted map[string]int) {
	launched, adopted = map[string]int{}, map[string]int{}
	for _, ev := range evs {
		if ev.EntityType != state.EntityAgentRun || ev.Action != "started" {
			continue
		}
		id, _ := ev.Data["agentId"].(string)
		if a, _ := ev.Data["adopted"].(bool); a {
			adopted[id]++
		} else {
			launched[id]++
		}
	}
	return launched, adopted
}

// startOrder lists agent ids in the order their runs started.
func startOrder(evs []state.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" {
			id, _ := ev.Data["agentId"].(string)
			out = append(out, id)
		}
	}
	return out
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
