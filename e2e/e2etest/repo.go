package e2etest

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

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/runtime/runtimetest"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// binPath and tmuxTmp are set once, by Run before any test starts, and
// read through Bin and TmuxDir.
var binPath, tmuxTmp string

// Repo is a scratch repository with a config, role prompts and waves.
type Repo struct {
	T    *testing.T // the test the repository belongs to
	Root string
}

// Config is the wave.config.yaml NewRepo writes: local executors, short
// heartbeats and grace, none of the validation rules that start at a wave.
const Config = `defaultLane: main
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

// NewRepo makes a scratch git repository with Config and the role prompts;
// its lane's tmux server is killed when the test ends.
func NewRepo(t *testing.T) *Repo {
	t.Helper()
	root := t.TempDir()
	r := &Repo{T: t, Root: root}
	r.Write("wave.config.yaml", Config)
	for _, role := range []string{"cont-qa", "cont-eval", "integration", "documentation", "security", "design"} {
		r.Write("docs/agents/wave-"+role+"-role.md", "# "+role+" role\n\n## Standing prompt\n\n```text\nYou hold the "+role+" role for this wave.\n```\n")
	}
	gittest.Init(t, root)
	t.Cleanup(func() { r.CleanupTmux() })
	return r
}

// Write writes body to rel under the repository, making directories.
func (r *Repo) Write(rel, body string) {
	r.T.Helper()
	p := filepath.Join(r.Root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.T.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		r.T.Fatal(err)
	}
}

// Layout is lane main's layout in the repository.
func (r *Repo) Layout() lanes.Layout { return lanes.New(r.Root, ".wave", "", "main") }

// CleanupTmux stops the repository's agent runs and kills lane main's
// tmux server. Agents outlive their session, so the runs are stopped
// first (and once more after the server goes, for one still launching):
// none is left writing into the test's directory as it is removed.
func (r *Repo) CleanupTmux() {
	state := filepath.Join(r.Root, ".wave")
	if err := runtimetest.StopRuns(state, time.Second); err != nil {
		r.T.Error(err)
	}
	_ = tmuxadapter.New(r.Layout().Socket()).KillServer(context.Background())
	if err := runtimetest.StopRuns(state, time.Second); err != nil {
		r.T.Error(err)
	}
}

// Agent describes one agent of a generated wave file.
type Agent struct {
	Id, Title  string
	rolePrompt string   // e.g. docs/agents/wave-cont-qa-role.md
	Owns       []string // owned paths; the first is also the deliverable of implementation agents
	Knobs      []string // extra `### Executor` bullets, e.g. "local.fail-attempts: 1"
	impl       bool
	Prompt     string
	DocImpact  string // exit contract doc-impact, default owned
}

// ImplAgent is an implementation agent owning src/<id>.txt.
func ImplAgent(id string, knobs ...string) Agent {
	return Agent{Id: id, Title: "Part " + id, Owns: []string{"src/" + strings.ToLower(id) + ".txt"}, Knobs: knobs, impl: true}
}

// ClosureAgents are the integration, documentation and cont-QA stewards.
func ClosureAgents() []Agent {
	return []Agent{
		{Id: "A8", Title: "Integration Steward", rolePrompt: "docs/agents/wave-integration-role.md", Owns: []string{"docs/reports/integration-0.md"}},
		{Id: "A9", Title: "Documentation Steward", rolePrompt: "docs/agents/wave-documentation-role.md", Owns: []string{"docs/plans/current-state.md"}},
		{Id: "A0", Title: "cont-QA", rolePrompt: "docs/agents/wave-cont-qa-role.md", Owns: []string{"docs/plans/waves/reviews/wave-0-cont-qa.md"}},
	}
}

// SecurityAgent is a security reviewer.
func SecurityAgent(knobs ...string) Agent {
	return Agent{Id: "S1", Title: "Security Review", rolePrompt: "docs/agents/wave-security-role.md", Owns: []string{"docs/security/wave-0-security.md"}, Knobs: knobs}
}

// WriteWave writes wave n's file with agents.
func (r *Repo) WriteWave(n int, agents ...Agent) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Wave %d - end to end\n\n**Commit message**: `Test: wave %d`\n\n", n, n)
	for _, a := range agents {
		fmt.Fprintf(&b, "## Agent %s: %s\n\n", a.Id, a.Title)
		if a.rolePrompt != "" {
			fmt.Fprintf(&b, "### Role prompts\n- %s\n\n", a.rolePrompt)
		}
		b.WriteString("### Executor\n")
		if !slices.ContainsFunc(a.Knobs, func(k string) bool { return strings.HasPrefix(k, "id:") }) {
			b.WriteString("- id: local\n")
		}
		for _, k := range a.Knobs {
			fmt.Fprintf(&b, "- %s\n", k)
		}
		b.WriteString("\n")
		if a.impl {
			doc := a.DocImpact
			if doc == "" {
				doc = "owned"
			}
			fmt.Fprintf(&b, "### Exit contract\n- completion: contract\n- durability: none\n- proof: unit\n- doc-impact: %s\n\n", doc)
			fmt.Fprintf(&b, "### Deliverables\n- %s\n\n", a.Owns[0])
		}
		prompt := a.Prompt
		if prompt == "" {
			prompt = "Do the work of " + a.Title + "."
		}
		fmt.Fprintf(&b, "### Prompt\n```text\n%s\n\nFile ownership (only touch these paths):\n", prompt)
		for _, o := range a.Owns {
			fmt.Fprintf(&b, "- %s\n", o)
		}
		b.WriteString("```\n\n")
	}
	r.Write(fmt.Sprintf("docs/plans/waves/wave-%d.md", n), b.String())
}

// Result of one CLI invocation.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs the binary with args in the repository.
func (r *Repo) Run(ctx context.Context, args ...string) Result {
	r.T.Helper()
	return RunCmd(r.T, r.Command(ctx, args...))
}

// Command is the binary with args in the repository, with the tests' TMUX_TMPDIR.
func (r *Repo) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binPath, append([]string{"--repo-root", r.Root}, args...)...)
	cmd.Dir = r.Root
	cmd.Env = append(os.Environ(), "TMUX_TMPDIR="+tmuxTmp)
	return cmd
}

// Events reads lane main's events; a bad line fails the test.
func (r *Repo) Events() []state.Event {
	r.T.Helper()
	evs, bad, err := state.ReadEvents(r.Layout().EventsPath())
	if err != nil || len(bad) > 0 {
		r.T.Fatalf("events: %v %v", err, bad)
	}
	return evs
}

// AgentStarts counts agent_run started events per agent (adopted runs are
// not launches and are counted separately).
func AgentStarts(evs []state.Event) (launched, adopted map[string]int) {
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

// StartOrder lists agent ids in the order their runs started.
func StartOrder(evs []state.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" {
			id, _ := ev.Data["agentId"].(string)
			out = append(out, id)
		}
	}
	return out
}

// WaitFor waits until cond holds, failing the test after timeout.
func WaitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ReadJSONFile decodes the JSON file at path into v.
func ReadJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// Lines splits s into lines.
func Lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
