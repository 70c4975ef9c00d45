package executor

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// BuildInput is one agent run to turn into a launch spec.
type BuildInput struct {
	Agent      *wave.Agent
	Wave       *wave.Wave
	Resolved   Resolved
	Lane       *config.Lane
	RunDir     string // overlay files are written here
	PromptPath string
	LogPath    string
	Attempt    int
	// Self is the absolute path of the wave-orchestrator binary; the
	// local executor runs it.
	Self string
	// Worker is set for a backlog worker run.
	Worker *WorkerInfo
	// LaunchEnv looks a variable up in the environment the launch runs
	// in (nil: none is looked at): a wave agent's StickyKeyEnv set there
	// is the user's and wins over the default.
	LaunchEnv func(name string) (string, bool)
}

// WorkerInfo describes a backlog worker run: the issue, its branch, the
// wave branch it is merged into and its worktree (the agent's cwd).
type WorkerInfo struct {
	Issue    int
	Branch   string
	Target   string
	Worktree string
	// TokenEnv names the GitHub token variable: workers never get it.
	TokenEnv string
	// Review marks the run of a reviewer over the worker's change.
	Review bool
	// RunID is the backlog run's id (WAVE_BACKLOG_RUN_ID).
	RunID string
}

// Spec is what the runner starts: Argv exactly (no shell), with what the
// EnvFilter drops removed from and Env added to its environment, and Stdin
// (a file) as standard input when set.
type Spec struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env"`
	runtime.EnvFilter
	// PrivateEnv and PrivateFiles are runtime.Payload's: env values
	// secret whatever their names, and generated files removed when the
	// run ends.
	PrivateEnv      []string          `json:"privateEnv,omitempty"`
	PrivateFiles    []string          `json:"privateFiles,omitempty"`
	Stdin           string            `json:"stdin,omitempty"`
	RateLimit       runtime.RateLimit `json:"rateLimit"`
	DeadlineMinutes int               `json:"deadlineMinutes"` // min(lane timeout, budget.minutes)
	Files           []string          `json:"files"`           // overlay files written
}

// DefaultScrub are removed from every agent's environment unless the lane
// configures its own list: inherited from a parent Claude Code session,
// they send a child's authentication to the wrong endpoint.
var DefaultScrub = []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"}

// MaxArgPrompt is the largest prompt passed as an argv element. Linux
// refuses a single argument over 128 KiB (MAX_ARG_STRLEN), so larger
// prompts go to claude and opencode on stdin, which both read when no
// prompt argument is given.
const MaxArgPrompt = 100 << 10

// Reference defaults (scripts/wave-orchestrator/shared.mjs).
const (
	defaultTimeoutMinutes = 240
	defaultRateBaseS      = 20
	defaultRateMaxS       = 180
)

// Build produces the launch spec for in and writes the executor's overlay
// files (claude settings and system prompt, opencode config and agent
// prompt) into in.RunDir.
func Build(in BuildInput) (Spec, error) {
	r := in.Resolved
	s := Spec{
		Env: map[string]string{
			"WAVE_LANE":        in.Lane.Name,
			"WAVE_NUMBER":      strconv.Itoa(in.Wave.Number),
			"WAVE_AGENT_ID":    in.Agent.ID,
			"WAVE_ATTEMPT":     strconv.Itoa(in.Attempt),
			"WAVE_EXECUTOR":    r.ID,
			"WAVE_RUN_DIR":     in.RunDir,
			"WAVE_PROMPT_FILE": in.PromptPath,
		},
		EnvFilter:       envFilter(in.Lane, r.ID, workerTokenEnv(in.Worker)),
		DeadlineMinutes: deadline(in.Lane, r.Budget),
		Files:           []string{},
	}
	if r.ID != Local && r.ID != Shell {
		s.RateLimit = rateLimit(in.Lane.Runtime)
	}
	placeholders := map[string]string{
		"{prompt_file}": in.PromptPath,
		"{log}":         in.LogPath,
		"{agent}":       in.Agent.ID,
		"{wave}":        strconv.Itoa(in.Wave.Number),
		"{attempt}":     strconv.Itoa(in.Attempt),
		"{run_dir}":     in.RunDir,
	}
	if w := in.Worker; w != nil {
		s.Env["WAVE_ISSUE_NUMBER"] = strconv.Itoa(w.Issue)
		s.Env["WAVE_WORKER_BRANCH"] = w.Branch
		s.Env["WAVE_TARGET_BRANCH"] = w.Target
		s.Env["WAVE_WORKTREE"] = w.Worktree
		if w.RunID != "" {
			s.Env["WAVE_BACKLOG_RUN_ID"] = w.RunID
		}
		delete(s.Env, "WAVE_NUMBER")
		placeholders["{issue}"] = strconv.Itoa(w.Issue)
		placeholders["{branch}"] = w.Branch
		placeholders["{worktree}"] = w.Worktree
	}
	var err error
	switch r.ID {
	case Codex:
		s.Argv, s.Stdin = codexArgv(r), in.PromptPath
	case Claude:
		err = buildClaude(in, &s)
	case Opencode:
		err = buildOpencode(in, &s)
	case Local:
		s.Argv, err = localArgv(in)
	case Shell:
		s.Argv, err = ExpandTemplate(deref(r.Shell.Command), placeholders)
	default:
		err = fmt.Errorf("unknown executor %q", r.ID)
	}
	if err != nil {
		return Spec{}, fmt.Errorf("agent %s: executor %s: %w", in.Agent.ID, r.ID, err)
	}
	// Configured env goes under ours (WAVE_* and OPENCODE_CONFIG are what
	// the run depends on) and under a claude settingsJson's env. Secret-looking values are redacted in
	// launch.json like any other env entry (runtime.Redacted).
	for k, v := range Env(r) {
		if _, ours := s.Env[k]; !ours {
			s.Env[k] = v
		}
	}
	if _, set := s.Env[StickyKeyEnv]; !set && in.Worker == nil {
		// After the configured env: a value the user set is theirs to
		// keep, for the agent or for the whole launch. Given here, not
		// inherited: its name looks secret, so the inherited one is
		// scrubbed.
		key := StickyKey(in.Lane.Name, in.Wave.Number, in.Attempt, in.Agent.ID)
		if in.LaunchEnv != nil {
			if v, ok := in.LaunchEnv(StickyKeyEnv); ok && v != "" {
				key = v
			}
		}
		s.Env[StickyKeyEnv] = key
	}
	return s, nil
}

// workerTokenEnv is the GitHub token variable of a backlog run (a
// worker's or a reviewer's), "" for a wave agent.
func workerTokenEnv(w *WorkerInfo) string {
	if w == nil {
		return ""
	}
	return cmp(w.TokenEnv, "GITHUB_TOKEN")
}

// StickyKeyEnv is the variable credential brokers (LPM and the like) read
// to pin one agent run to one credential lease: the same run keeps its
// key across its own rate-limit retries, a new attempt gets a new one.
const StickyKeyEnv = "LPM_AUTH_STICKY_KEY"

// StickyKey is the default StickyKeyEnv value of a wave agent's run:
// wave:<lane>:<wave>:<attempt>:<agent>.
func StickyKey(lane string, wave, attempt int, agent string) string {
	return fmt.Sprintf("wave:%s:%d:%d:%s", lane, wave, attempt, agent)
}

// ScrubList is the variables removed from every agent's environment on
// lane l: executors.env.scrub, where unset (nil) means DefaultScrub and an
// empty list turns scrubbing off.
func ScrubList(l *config.Lane) []string { return scrubList(l) }

func scrubList(l *config.Lane) []string {
	if l.Executors.Env.Scrub != nil {
		return union(l.Executors.Env.Scrub)
	}
	return append([]string(nil), DefaultScrub...)
}

func deadline(l *config.Lane, b *wave.Budget) int {
	m := l.Runtime.TimeoutMinutes
	if m <= 0 {
		m = defaultTimeoutMinutes
	}
	if b != nil && b.Minutes != nil && *b.Minutes > 0 {
		m = min(m, *b.Minutes)
	}
	return m
}

func rateLimit(rt config.Runtime) runtime.RateLimit {
	base, maxS := rt.RateLimitBaseDelayS, rt.RateLimitMaxDelayS
	if base <= 0 {
		base = defaultRateBaseS
	}
	if maxS <= 0 {
		maxS = defaultRateMaxS
	}
	return runtime.RateLimit{Retries: max(rt.RateLimitRetries, 0), BaseDelayMs: base * 1000, MaxDelayMs: max(maxS, base) * 1000}
}

// codexArgv is the codex exec command line as argv; the prompt
// comes on stdin ("-"). search is honoured through the config override
// `tools.web_search=true`: `codex exec` rejects the TUI's --search flag.
// --dangerously-bypass-approvals-and-sandbox goes only with the default
// danger-full-access: codex lets it override --sandbox, so with it a
// read-only or workspace-write sandbox would silently not apply (the
// reference always emits it).
func codexArgv(r Resolved) []string {
	c := r.Codex
	sandbox := cmp(deref(c.Sandbox), DefaultCodexSandbox)
	a := []string{Command(r), "exec"}
	if sandbox == DefaultCodexSandbox {
		a = append(a, "--dangerously-bypass-approvals-and-sandbox")
	}
	a = append(a, "--skip-git-repo-check", "--sandbox", sandbox)
	a = single(a, "--model", deref(r.Model))
	a = single(a, "--profile", deref(c.ProfileName))
	cfg := c.Config
	if c.Search != nil && *c.Search {
		cfg = union(cfg, []string{"tools.web_search=true"})
	}
	a = repeated(a, "-c", cfg)
	a = repeated(a, "--image", c.Images)
	a = repeated(a, "--add-dir", c.AddDirs)
	if c.JSON != nil && *c.JSON {
		a = append(a, "--json")
	}
	if c.Ephemeral != nil && *c.Ephemeral {
		a = append(a, "--ephemeral")
	}
	return append(a, "-")
}

func localArgv(in BuildInput) ([]string, error) {
	if in.Self == "" {
		return nil, fmt.Errorf("no path to the wave-orchestrator binary for the local agent")
	}
	l := in.Resolved.Local
	if in.Worker != nil {
		// The backlog worker simulator: its knobs come from the issue
		// it is given, like a real agent's instructions.
		a := []string{in.Self, "local-worker", "--prompt-file", in.PromptPath}
		if in.Worker.Review {
			a = append(a, "--review")
		}
		return single(a, "--delay", deref(l.Delay)), nil
	}
	a := []string{in.Self, "local", "--prompt-file", in.PromptPath}
	a = single(a, "--delay", deref(l.Delay))
	if l.ExitCode != nil {
		a = append(a, "--exit-code", strconv.Itoa(*l.ExitCode))
	}
	if l.FailAttempts != nil {
		a = append(a, "--fail-attempts", strconv.Itoa(*l.FailAttempts))
	}
	a = single(a, "--verdict", deref(l.Verdict))
	a = single(a, "--security", deref(l.Security))
	a = single(a, "--ask", deref(l.Ask))
	return a, nil
}

// promptArg returns the prompt as the final argv element, or, when it is
// too large for one argument, nothing and the prompt file as stdin.
func promptArg(in BuildInput, s *Spec) ([]string, error) {
	b, err := os.ReadFile(in.PromptPath)
	if err != nil {
		return nil, fmt.Errorf("read prompt: %w", err)
	}
	if len(b) > MaxArgPrompt {
		s.Stdin = in.PromptPath
		return nil, nil
	}
	return []string{string(b)}, nil
}

func single(a []string, flag, v string) []string {
	if v == "" {
		return a
	}
	return append(a, flag, v)
}

func repeated(a []string, flag string, vs []string) []string {
	for _, v := range vs {
		if v != "" {
			a = append(a, flag, v)
		}
	}
	return a
}

func writeOverlay(s *Spec, path string, data []byte) error {
	if err := jsonfile.MkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("overlay dir: %w", err)
	}
	if err := jsonfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("write overlay: %w", err)
	}
	s.Files = append(s.Files, path)
	return nil
}

// harnessPrompt is the system prompt overlay for claude and opencode.
func harnessPrompt(a *wave.Agent, executorID string) string {
	return strings.Join([]string{
		"You run inside the wave orchestrator, unattended.",
		"Executor: " + executorID + ".",
		"Your assignment: agent " + oneLine(a.ID) + " (" + oneLine(a.Title) + ").",
		"The task prompt you receive is the authoritative assignment.",
		"Print the wave markers it asks for exactly as written, each on its own line.",
		"Keep its coordination, exit-contract and file-ownership rules; never drop or reword them.",
		"Answer in plain text unless the task asks for code blocks.",
	}, "\n") + "\n"
}

// ProbeArgv is the one-token check that claude answers, run with the
// command and model its agents use; nil for other executors (they have
// no probe of their own).
func ProbeArgv(r Resolved) []string {
	if r.ID != Claude {
		return nil
	}
	a := single([]string{Command(r), "-p", "--no-session-persistence", "--max-turns", "1"},
		"--model", deref(firstSet(r.Claude.Model, r.Model)))
	return append(a, "reply ok")
}

// ProbeSpec is how a probe of r's executor runs: argv, with the
// environment changes a backlog worker of r gets on lane (its configured
// env, the scrub list, every secret but its executor's credentials, the
// GitHub token variable tokenEnv), so the probe sees the endpoint and
// credentials a worker would.
func ProbeSpec(r Resolved, lane *config.Lane, argv []string, tokenEnv string) Spec {
	s := Spec{Argv: argv, Env: Env(r), EnvFilter: envFilter(lane, r.ID, cmp(tokenEnv, "GITHUB_TOKEN")), Files: []string{}}
	if s.Env == nil {
		s.Env = map[string]string{}
	}
	return s
}

// Environ is base (KEY=VALUE entries) as s's process sees it: what the
// EnvFilter drops removed, s.Env set over it — what the runner does to an
// agent's environment.
func (s Spec) Environ(base []string) []string {
	out := make([]string, 0, len(base)+len(s.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := s.Env[k]; !s.Drops(k) && !set {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		out = append(out, k+"="+s.Env[k])
	}
	return out
}
