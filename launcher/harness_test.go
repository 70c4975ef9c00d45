package launcher

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/localagent"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// The wave loop's harness: a real lane on disk (config, wave files, event
// log, coordination log, run directories), the launcher over it, and
// fakeRuns for the one thing it does not run here, the agents' processes.

// play is what one run of an agent does: it writes the agent's output to
// log and returns its exit code. attempt is the run's index (the agent's
// WAVE_ATTEMPT).
type play func(p *runtime.Payload, attempt int, log io.Writer) int

// localPlay is the built-in local agent, run in-process on the prompt the
// launcher wrote: it lands the agent's files in the repository and prints
// the markers its role needs (and fails, asks … as its local.* knobs say).
func localPlay(p *runtime.Payload, _ int, log io.Writer) int {
	args := append(append([]string(nil), p.Argv[2:]...), "--repo-root", p.Cwd)
	return localagent.Main(args, log, func(k string) string { return p.Env[k] })
}

// fakeRun is one run as fakeRuns keeps it.
type fakeRun struct {
	p    *runtime.Payload
	done bool
	obs  runtime.Verdict
}

// fakeRuns is the launcher's Runs with the agents played in-process: a
// started run plays at once (its agent's play, else localPlay) and ends
// with the play's exit code, recorded as the runner would (runtime.json,
// status.json, agent.log), unless the test holds the agent's next runs: a
// held run stays running until released or terminated.
type fakeRuns struct {
	t       testing.TB
	mu      sync.Mutex
	plays   map[string]play
	holding map[string]int      // agent → how many of its next runs to hold
	runs    map[string]*fakeRun // run dir → run
	started []string            // run ids in start order
	changed chan string
	held    chan string // run dirs of held runs, as they start
	adopted chan string // run dirs watched without a start: adoptions
}

func newFakeRuns(t testing.TB) *fakeRuns {
	return &fakeRuns{t: t, plays: map[string]play{}, holding: map[string]int{}, runs: map[string]*fakeRun{},
		changed: make(chan string, 1024), held: make(chan string, 64), adopted: make(chan string, 64)}
}

// on sets what agent id's runs do.
func (f *fakeRuns) on(id string, pl play) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.plays[id] = pl
}

// hold keeps agent id's next n runs running until released.
func (f *fakeRuns) hold(id string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holding[id] = n
}

func (f *fakeRuns) Start(_ context.Context, ps []*runtime.Payload) error {
	for _, p := range ps {
		if err := runtime.WriteJSON(filepath.Join(p.RunDir, lanes.LaunchFile), runtime.Redacted(*p)); err != nil {
			return err
		}
		rec := runtime.Record{SchemaVersion: runtime.SchemaVersion, RunID: p.RunID, Lane: p.Lane, WaveNumber: p.WaveNumber,
			Attempt: p.Attempt, AgentID: p.AgentID, ExecutorID: p.ExecutorID, SessionName: p.SessionName, StartedAt: time.Now()}
		if err := runtime.WriteJSON(p.RuntimePath, rec); err != nil {
			return err
		}
		f.mu.Lock()
		f.runs[p.RunDir] = &fakeRun{p: p, obs: runtime.Verdict{State: runtime.StateRunning}}
		f.started = append(f.started, p.RunID)
		hold := f.holding[p.AgentID] > 0
		if hold {
			f.holding[p.AgentID]--
		}
		f.mu.Unlock()
		if hold {
			f.held <- p.RunDir
			continue
		}
		f.finish(p.RunDir)
	}
	return nil
}

// release lets a held run play to its end.
func (f *fakeRuns) release(dir string) { f.finish(dir) }

// finish plays the run in dir and records how it ended.
func (f *fakeRuns) finish(dir string) {
	f.mu.Lock()
	run := f.runs[dir]
	pl := f.plays[run.p.AgentID]
	f.mu.Unlock()
	if pl == nil {
		pl = localPlay
	}
	attempt, _ := strconv.Atoi(run.p.Env["WAVE_ATTEMPT"])
	var log bytes.Buffer
	code := pl(run.p, attempt, &log)
	if err := os.WriteFile(run.p.LogPath, log.Bytes(), 0o644); err != nil {
		f.t.Error(err)
	}
	st := runtime.Status{Code: code, PromptHash: run.p.PromptHash, OrchestratorID: run.p.OrchestratorID, Attempt: attempt, CompletedAt: time.Now()}
	if err := runtime.WriteJSON(run.p.StatusPath, st); err != nil {
		f.t.Error(err)
	}
	v := runtime.Verdict{State: runtime.StateCompleted, Done: true, ExitCode: &code}
	if code != 0 {
		v.State = runtime.StateFailed
		// As the runner reads a failed agent's output.
		if lim, ok := runtime.DetectUsageLimit(log.Bytes(), time.Now(), time.Local); ok {
			v.State, v.UsageLimit = runtime.StateUsageLimited, &lim
		}
	}
	f.end(dir, v)
}

func (f *fakeRuns) end(dir string, v runtime.Verdict) {
	f.mu.Lock()
	run := f.runs[dir]
	if !run.done {
		run.done, run.obs = true, v
	}
	f.mu.Unlock()
	select {
	case f.changed <- dir:
	default: // dropped, as under load: the wait loop's sweep finds it
	}
}

func (f *fakeRuns) Watch(dir string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.runs[dir]; ok {
		// A run started before this launcher's life: an adoption (a new
		// run is watched before it starts).
		f.adopted <- dir
	}
}

func (f *fakeRuns) Changed() <-chan string { return f.changed }

func (f *fakeRuns) Observe(_ context.Context, dir string, _ time.Time) runtime.Observation {
	f.mu.Lock()
	defer f.mu.Unlock()
	run := f.runs[dir]
	if run == nil {
		return runtime.Observation{RunDir: dir, Verdict: runtime.Verdict{State: runtime.StateUnknown}}
	}
	return runtime.Observation{RunDir: dir, RunID: run.p.RunID, Verdict: run.obs,
		Record: &runtime.Record{RunID: run.p.RunID, AgentID: run.p.AgentID, ExecutorID: run.p.ExecutorID}}
}

func (f *fakeRuns) Terminate(_ context.Context, dir string, _ time.Duration, _ bool) error {
	f.mu.Lock()
	run := f.runs[dir]
	f.mu.Unlock()
	if run != nil {
		f.end(dir, runtime.Verdict{State: runtime.StateTerminated, Done: true, Signal: "SIGTERM"})
	}
	return nil
}

func (f *fakeRuns) Discard(context.Context, *runtime.Payload) error      { return nil }
func (f *fakeRuns) DiscardAll(context.Context, []*runtime.Payload) error { return nil }

// runIDs are the runs started, in order (w<wave>-<agent>-a<k>).
func (f *fakeRuns) runIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.started...)
}

// harnessConfig is a lane whose agents run on the local executor, with
// the validation thresholds that need scaffolding turned off.
const harnessConfig = `defaultLane: main
executors:
  default: local
validation:
  requireDocumentationStewardFromWave: null
  requireContext7DeclarationsFromWave: null
  requireExitContractsFromWave: null
  requireIntegrationStewardFromWave: null
  requireComponentPromotionsFromWave: null
  requireAgentComponentsFromWave: null
  requiredPromptReferences: []
`

// harness is a repository with a lane, its wave files and fakeRuns.
type harness struct {
	t      *testing.T
	root   string
	config string
	runs   *fakeRuns
	out    *syncBuffer
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, root: t.TempDir(), config: harnessConfig, runs: newFakeRuns(t), out: &syncBuffer{}}
	for _, role := range []string{"cont-qa", "cont-eval", "integration", "documentation", "security"} {
		h.write("docs/agents/wave-"+role+"-role.md", "# "+role+" role\n\n## Standing prompt\n\n```text\nYou hold the "+role+" role.\n```\n")
	}
	return h
}

func (h *harness) write(rel, body string) {
	h.t.Helper()
	p := filepath.Join(h.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) layout() lanes.Layout { return lanes.New(h.root, ".wave", "", "main") }

// agentDoc is one agent of a test wave file.
type agentDoc struct {
	id, title, rolePrompt string
	owns                  []string
	knobs                 []string // ### Executor lines after the id
	contract              bool     // an exit contract and the owned file as its deliverable
	components            []string
}

// implAgent implements src/<id>.txt under an exit contract.
func implAgent(id string, knobs ...string) agentDoc {
	return agentDoc{id: id, title: "Part " + id, owns: []string{"src/" + strings.ToLower(id) + ".txt"}, knobs: knobs, contract: true}
}

// closureAgents are the integration, documentation and cont-QA stewards.
func closureAgents(n int) []agentDoc {
	return []agentDoc{
		{id: "A8", title: "Integration Steward", rolePrompt: "docs/agents/wave-integration-role.md", owns: []string{fmt.Sprintf("docs/reports/integration-%d.md", n)}},
		{id: "A9", title: "Documentation Steward", rolePrompt: "docs/agents/wave-documentation-role.md", owns: []string{"docs/plans/current-state.md"}},
		{id: "A0", title: "cont-QA", rolePrompt: "docs/agents/wave-cont-qa-role.md", owns: []string{fmt.Sprintf("docs/plans/waves/reviews/wave-%d-cont-qa.md", n)}},
	}
}

// wave writes wave n's file; head goes before the agents (## sections
// of the wave itself).
func (h *harness) wave(n int, head string, agents ...agentDoc) {
	var b strings.Builder
	fmt.Fprintf(&b, "# Wave %d - harness\n\n**Commit message**: `Test: wave %d`\n\n%s", n, n, head)
	for _, a := range agents {
		fmt.Fprintf(&b, "## Agent %s: %s\n\n", a.id, a.title)
		if a.rolePrompt != "" {
			fmt.Fprintf(&b, "### Role prompts\n- %s\n\n", a.rolePrompt)
		}
		b.WriteString("### Executor\n- id: local\n")
		for _, k := range a.knobs {
			fmt.Fprintf(&b, "- %s\n", k)
		}
		b.WriteString("\n")
		if a.contract {
			b.WriteString("### Exit contract\n- completion: contract\n- durability: none\n- proof: unit\n- doc-impact: owned\n\n")
			fmt.Fprintf(&b, "### Deliverables\n- %s\n\n", a.owns[0])
		}
		if len(a.components) > 0 {
			fmt.Fprintf(&b, "### Components\n- %s\n\n", strings.Join(a.components, "\n- "))
		}
		fmt.Fprintf(&b, "### Prompt\n```text\nDo the work of %s.\n\nFile ownership (only touch these paths):\n", a.title)
		for _, o := range a.owns {
			fmt.Fprintf(&b, "- %s\n", o)
		}
		b.WriteString("```\n\n")
	}
	h.write(fmt.Sprintf("docs/plans/waves/wave-%d.md", n), b.String())
}

// launcher is a launcher of waves from..end (end < 0: all) over the
// harness's runs, with edit applied to its options.
func (h *harness) launcher(from, end int, edit func(*Options)) *Launcher {
	h.t.Helper()
	h.write("wave.config.yaml", h.config)
	cfg, err := config.Load(h.root, func(string) (string, bool) { return "", false })
	if err != nil {
		h.t.Fatal(err)
	}
	lane, err := cfg.Lane(h.root, "main")
	if err != nil {
		h.t.Fatal(err)
	}
	opts := wave.Options{Roles: wave.Roles(lane.Roles), BenchmarkCatalogPath: lane.BenchmarkCatalogPath,
		Context7BundleIndexPath: lane.Context7BundleIndexPath,
		ReadFile:                func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(h.root, filepath.FromSlash(rel))) }}
	ws, err := wave.LoadDir(h.root, lane.WavesDir, opts)
	if err == nil {
		err = wave.Validate(ws, lane, opts)
	}
	if err != nil {
		h.t.Fatal(err)
	}
	o := Options{Layout: h.layout(), Lane: lane, Waves: ws, StartWave: from, EndWave: end, MaxRetries: 1,
		Self: "/usr/local/bin/wave-orchestrator", Out: h.out}
	if edit != nil {
		edit(&o)
	}
	return New(o, h.runs)
}

// launch runs waves from..end to their verdict (or a minute).
func (h *harness) launch(from, end int, edit func(*Options)) (Result, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return h.launcher(from, end, edit).Run(ctx)
}

// events are the lane's events of wave n, of entity (all when "").
func (h *harness) events(n int, entity string) []state.Event {
	h.t.Helper()
	evs, _, err := state.ReadEvents(h.layout().EventsPath())
	if err != nil {
		h.t.Fatal(err)
	}
	var out []state.Event
	for _, ev := range evs {
		if ev.Wave == n && (entity == "" || ev.EntityType == entity) {
			out = append(out, ev)
		}
	}
	return out
}

// syncBuffer is the launcher's output, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
