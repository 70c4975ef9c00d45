package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// repoWith makes a temp repo holding files (name → content).
func repoWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func yamlRepo(t *testing.T, body string) string {
	return repoWith(t, map[string]string{"wave.config.yaml": body})
}

func mustLoad(t *testing.T, dir string, env map[string]string) *Config {
	t.Helper()
	c, err := Load(dir, mapEnv(env))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func mapEnv(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func mustLane(t *testing.T, c *Config, dir, name string) *Lane {
	t.Helper()
	l, err := c.Lane(dir, name)
	if err != nil {
		t.Fatalf("Lane(%q): %v", name, err)
	}
	return l
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestDefaultsWithoutConfigFile(t *testing.T) {
	dir := t.TempDir()
	c := mustLoad(t, dir, nil)
	if c.File != "" {
		t.Errorf("File = %q, want empty", c.File)
	}
	l := mustLane(t, c, dir, "")
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"lane", l.Name, "main"},
		{"project", l.Project, filepath.Base(dir)},
		{"wavesDir", l.WavesDir, "docs/plans/waves"},
		{"stateRoot", l.StateRoot, ".wave"},
		{"matrix", l.MatrixDocPath, "docs/plans/component-cutover-matrix.md"},
		{"sharedPlanDocs", l.SharedPlanDocs, []string{"docs/plans/current-state.md", "docs/plans/master-plan.md", "docs/plans/migration.md"}},
		{"contQa", l.Roles.ContQaAgentID, "A0"},
		{"contEval", l.Roles.ContEvalAgentID, "E0"},
		{"integration", l.Roles.IntegrationAgentID, "A8"},
		{"documentation", l.Roles.DocumentationAgentID, "A9"},
		{"securityPrompt", l.Roles.SecurityRolePromptPath, "docs/agents/wave-security-role.md"},
		{"executor", l.Executors.Default, "codex"},
		{"codex sandbox", deref(l.Executors.Codex.Sandbox), "danger-full-access"},
		{"claude permission", deref(l.Executors.Claude.PermissionMode), "bypassPermissions"},
		{"claude output", deref(l.Executors.Claude.OutputFormat), "text"},
		{"claude prompt mode", l.Executors.Claude.AppendSystemPromptMode, "append"},
		{"opencode format", deref(l.Executors.Opencode.Format), "default"},
		{"scrub", l.Executors.Env.Scrub, []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"}},
		{"doc steward", deref(l.Validation.RequireDocumentationStewardFromWave), 0},
		{"context7", deref(l.Validation.RequireContext7DeclarationsFromWave), 6},
		{"exit contracts", deref(l.Validation.RequireExitContractsFromWave), 6},
		{"integration steward", deref(l.Validation.RequireIntegrationStewardFromWave), nil},
		{"promotions", deref(l.Validation.RequireComponentPromotionsFromWave), 0},
		{"agent components", deref(l.Validation.RequireAgentComponentsFromWave), 0},
		{"prompt refs", len(l.Validation.RequiredPromptReferences), 2},
		{"gate modes", l.Validation.GateModeThresholds, Modes{0, 4, 10}},
		{"closure modes", l.Validation.ClosureModeThresholds, Modes{0, 4, 10}},
		{"auto closure", l.Validation.AutoClosure, AutoClosure{}},
		{"runtime", l.Runtime, Runtime{2000, 5000, 240, 50000, 2, 20, 180, 0, 0, 0, 0, 64 << 20, "", Kubernetes{}, RuntimeBudget{}, 0, 0, Sandbox{}}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

// TestEveryKeyJSONLoads loads a wave.config.json in the reference's format
// that sets every key it knows (the reference's own starter file is checked
// by the opt-in refparity test).
func TestEveryKeyJSONLoads(t *testing.T) {
	data, err := os.ReadFile("testdata/every-key.wave.config.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := repoWith(t, map[string]string{"wave.config.json": string(data)})
	c := mustLoad(t, dir, nil)
	l := mustLane(t, c, dir, "main")
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"file", filepath.Base(c.File), "wave.config.json"},
		{"project", l.Project, "Ledgerline"},
		// The reference's ".tmp" is not our state root.
		{"stateRoot", l.StateRoot, ".wave"},
		{"wavesDir", l.WavesDir, "handbook/plans/waves"},
		{"catalog", l.BenchmarkCatalogPath, "handbook/evals/catalog.json"},
		{"bundle index", l.Context7BundleIndexPath, "handbook/ctx/index.json"},
		{"cont-QA id", l.Roles.ContQaAgentID, "Q0"},
		{"design prompt", l.Roles.DesignRolePromptPath, "handbook/roles/design.md"},
		{"default executor", l.Executors.Default, "claude"},
		{"profiles", len(l.Executors.Profiles), 5},
		{"planning sandbox", deref(l.Executors.Profiles["planning-readonly"].Codex.Sandbox), "read-only"},
		{"planning config", l.Executors.Profiles["planning-readonly"].Codex.Config, []string{"model_reasoning_effort=low"}},
		{"security tools", len(l.Executors.Profiles["security-review"].Claude.AllowedTools), 4},
		{"docs budget", deref(l.Executors.Profiles["docs-pass"].Budget.Minutes), 15},
		{"codex sandbox", deref(l.Executors.Codex.Sandbox), "workspace-write"},
		// The file omits permissionMode; the code default fills it.
		{"claude permission", deref(l.Executors.Claude.PermissionMode), "bypassPermissions"},
		{"prompt refs", len(l.Validation.RequiredPromptReferences), 3},
		{"doc steward", deref(l.Validation.RequireDocumentationStewardFromWave), 1},
		{"context7", deref(l.Validation.RequireContext7DeclarationsFromWave), 5},
		{"exit contracts", deref(l.Validation.RequireExitContractsFromWave), 4},
		{"integration steward", deref(l.Validation.RequireIntegrationStewardFromWave), 2},
		{"promotions", deref(l.Validation.RequireComponentPromotionsFromWave), 3},
		{"auto closure", l.Validation.AutoClosure, AutoClosure{false, true, true}},
		{"closure modes", l.Validation.ClosureModeThresholds, Modes{0, 3, 8}},
		{"gate modes default", l.Validation.GateModeThresholds, Modes{0, 4, 10}},
		{"mix", l.RuntimePolicy.RuntimeMixTargets, map[string]int{"codex": 6, "claude": 5, "opencode": 3}},
		{"fallback order", l.RuntimePolicy.FallbackExecutorOrder, []string{"opencode", "claude", "codex"}},
		{"role default", l.RuntimePolicy.DefaultExecutorByRole["deploy"], "codex"},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
}

// A JSON file indented with tabs is valid JSON but not valid YAML; it
// must still load.
func TestTabIndentedJSONLoads(t *testing.T) {
	dir := repoWith(t, map[string]string{"wave.config.json": "{\n\t\"defaultLane\": \"ops\",\n\t\"executors\": {\n\t\t\"default\": \"claude\"\n\t}\n}\n"})
	c := mustLoad(t, dir, nil)
	if c.DefaultLane != "ops" || c.Executors.Default != "claude" {
		t.Errorf("got lane %q executor %q", c.DefaultLane, c.Executors.Default)
	}
	bad := repoWith(t, map[string]string{"wave.config.json": "{\n\t\"executors\": {\n\t\t\"defualt\": \"claude\"\n\t}\n}\n"})
	if _, err := Load(bad, nil); err == nil || !strings.Contains(err.Error(), "executors.defualt: unknown key") {
		t.Errorf("err = %v, want unknown key executors.defualt", err)
	}
}

func TestYAMLPreferredOverJSON(t *testing.T) {
	dir := repoWith(t, map[string]string{
		"wave.config.yaml": "defaultLane: from-yaml\n",
		"wave.config.json": `{"defaultLane": "from-json"}`,
	})
	if c := mustLoad(t, dir, nil); c.DefaultLane != "from-yaml" {
		t.Errorf("DefaultLane = %q, want from-yaml", c.DefaultLane)
	}
	yml := repoWith(t, map[string]string{"wave.config.yml": "defaultLane: from-yml\n"})
	if c := mustLoad(t, yml, nil); c.DefaultLane != "from-yml" {
		t.Errorf("DefaultLane = %q, want from-yml", c.DefaultLane)
	}
}

func TestYAMLStateRootIsHonoured(t *testing.T) {
	dir := yamlRepo(t, "paths:\n  stateRoot: ./var/wave/\n")
	l := mustLane(t, mustLoad(t, dir, nil), dir, "")
	if l.StateRoot != "var/wave" {
		t.Errorf("StateRoot = %q, want var/wave", l.StateRoot)
	}
}

func TestEmptyYAMLIsDefaults(t *testing.T) {
	for _, body := range []string{"", "# nothing\n", "---\n"} {
		dir := yamlRepo(t, body)
		c := mustLoad(t, dir, nil)
		if c.Executors.Default != "codex" || c.Runtime.HeartbeatIntervalMs != 2000 {
			t.Errorf("%q: not defaults: %+v", body, c.Executors.Default)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want []string // substrings of the joined error
	}{
		{"unknown top key", "projetName: x\n", []string{"wave.config.yaml:1: projetName: unknown key"}},
		{"unknown nested key", "runtime:\n  heartbeatInterval: 5\n", []string{"wave.config.yaml:2: runtime.heartbeatInterval: unknown key"}},
		{"unknown claude key", "executors:\n  claude:\n    permisionMode: plan\n", []string{":3: executors.claude.permisionMode: unknown key"}},
		{"unknown lane key", "lanes:\n  ops:\n    wavesdir: x\n", []string{":3: lanes.ops.wavesdir: unknown key"}},
		{"unknown profile key", "executors:\n  profiles:\n    fast:\n      modle: x\n", []string{":4: executors.profiles.fast.modle: unknown key"}},
		{"all reported at once", "a: 1\nb: 2\n", []string{":1: a: unknown key", ":2: b: unknown key"}},
		{"renamed role", "roles:\n  evaluatorAgentId: A0\n", []string{"roles.evaluatorAgentId: renamed to roles.contQaAgentId"}},
		{"not a mapping", "runtime: 5\n", []string{":1: runtime: want a mapping"}},
		{"not an int", "runtime:\n  timeoutMinutes: soon\n", []string{":2: runtime.timeoutMinutes: want an integer, got \"soon\""}},
		{"not a bool", "executors:\n  codex:\n    search: maybe\n", []string{":3: executors.codex.search: want true or false"}},
		{"list of mappings for string", "projectName: [a]\n", []string{"projectName: want a single value"}},
		{"bad yaml", "a: [\n", []string{"wave.config.yaml: not valid YAML"}},
		{"bad executor", "executors:\n  default: codx\n", []string{":2: executors.default: \"codx\" is not one of claude, codex, local, opencode, shell"}},
		{"bad sandbox", "executors:\n  codex:\n    sandbox: yolo\n", []string{":3: executors.codex.sandbox: \"yolo\" is not one of"}},
		{"bad profile id", "executors:\n  profiles:\n    x:\n      id: gpt\n", []string{":4: executors.profiles.x.id: \"gpt\" is not one of"}},
		{"bad profile budget", "executors:\n  profiles:\n    x:\n      budget:\n        minutes: 0\n", []string{"executors.profiles.x.budget.minutes: must be a positive integer"}},
		{"negative heartbeat", "runtime:\n  heartbeatIntervalMs: -1\n", []string{":2: runtime.heartbeatIntervalMs: must be >= 1, got -1"}},
		{"negative grace", "runtime:\n  terminateGraceMs: -5\n", []string{"runtime.terminateGraceMs: must be >= 0"}},
		{"negative silence", "runtime:\n  silenceMinutes: -1\n", []string{":2: runtime.silenceMinutes: must be >= 0, got -1"}},
		{"negative silence seconds", "runtime:\n  silenceSeconds: -3\n", []string{":2: runtime.silenceSeconds: must be >= 0, got -3"}},
		{"tiny log cap", "runtime:\n  maxLogBytes: 4096\n", []string{":2: runtime.maxLogBytes: must be 0 (no cap) or >= 1048576"}},
		{"bad backend", "runtime:\n  backend: docker\n", []string{":2: runtime.backend: want tmux or kubernetes"}},
		{"kubernetes without image", "runtime:\n  backend: kubernetes\n  kubernetes:\n    workspace: {claimName: repo}\n", []string{"runtime.kubernetes.image: required"}},
		{"kubernetes bad gitURL", "runtime:\n  backend: kubernetes\n  kubernetes:\n    image: img\n    gitURL: \"-u evil\"\n", []string{"runtime.kubernetes.gitURL: not a git URL"}},
		{"negative snapshot period", "backlog:\n  snapshotMinutes: -1\n", []string{":2: backlog.snapshotMinutes: must be >= 0, got -1"}},
		{"checks without GitHub", "backlog:\n  checks: [ci]\n", []string{":2: backlog.checks: needs the github source"}},
		{"a check named twice", "github: {owner: o, repo: r}\nbacklog:\n  checks: [ci, lint, ci]\n", []string{`:3: backlog.checks: check "ci" is named twice`}},
		{"negative verifyParallel", "backlog:\n  verifyParallel: -1\n", []string{":2: backlog.verifyParallel: must be >= 0, got -1"}},
		{"checks timeout zero", "backlog:\n  checksTimeoutMinutes: 0\n", []string{":2: backlog.checksTimeoutMinutes: must be >= 1, got 0"}},
		{"kubernetes two workspaces", "runtime:\n  backend: kubernetes\n  kubernetes:\n    image: img\n    workspace: {claimName: a, hostPath: /b}\n", []string{"runtime.kubernetes.workspace: set claimName or hostPath, not both"}},
		{"kubernetes misspelt key", "runtime:\n  kubernetes:\n    imagee: img\n", []string{`:3: runtime.kubernetes.imagee: unknown key (did you mean "image"?)`}},
		{"kubernetes bad passEnv", "runtime:\n  backend: kubernetes\n  kubernetes:\n    image: img\n    workspace: {hostPath: /r}\n    passEnv: [\"A B\"]\n", []string{"runtime.kubernetes.passEnv: not an environment variable name"}},
		{"max below base", "runtime:\n  rateLimitBaseDelaySeconds: 60\n  rateLimitMaxDelaySeconds: 10\n", []string{":3: runtime.rateLimitMaxDelaySeconds: must be >= rateLimitBaseDelaySeconds"}},
		{"negative threshold", "validation:\n  requireExitContractsFromWave: -1\n", []string{":2: validation.requireExitContractsFromWave: must be >= 0"}},
		{"bad lane name", "lanes:\n  Bad_Lane:\n    wavesDir: x\n", []string{"lanes.Bad_Lane: lane \"Bad_Lane\""}},
		{"bad default lane", "defaultLane: \"a b\"\n", []string{":1: defaultLane: lane \"a b\""}},
		{"escaping path", "paths:\n  docsDir: ../elsewhere\n", []string{"must stay inside the repository"}},
		{"lane escaping wavesDir", "lanes:\n  ops:\n    wavesDir: /abs\n", []string{":3: lanes.ops.wavesDir: path \"/abs\" must stay inside"}},
		{"lane bad executor", "lanes:\n  ops:\n    executors:\n      default: nope\n", []string{":4: lanes.ops.executors.default: \"nope\" is not one of"}},
		{"bad repoMode", "repoMode: mono\n", []string{":1: repoMode: \"mono\" is not one of single-repo, multi-lane"}},
		{"bad mix executor", "runtimePolicy:\n  runtimeMixTargets:\n    gpt: 2\n", []string{"runtimePolicy.runtimeMixTargets.gpt: \"gpt\" is not one of"}},
		{"evaluator role", "lanes:\n  main:\n    runtimePolicy:\n      defaultExecutorByRole:\n        evaluator: claude\n", []string{"defaultExecutorByRole.evaluator: renamed"}},
		{"bad scrub name", "executors:\n  env:\n    scrub: [\"A B\"]\n", []string{"executors.env.scrub[0]: \"A B\" is not an environment variable name"}},
		{"bad api url", "github:\n  apiUrl: ftp://x\n", []string{":2: github.apiUrl: want an http(s) URL"}},
		{"bad vendor env name", "executors:\n  claude:\n    env:\n      \"A-B\": x\n", []string{":4: executors.claude.env.A-B: \"A-B\" is not an environment variable name"}},
		{"misspelt skills role", "skills:\n  byRole:\n    implemntation: [a]\n", []string{`:3: skills.byRole.implemntation: unknown key (did you mean "implementation"?)`}},
		{"misspelt skills runtime in a lane", "lanes:\n  ops:\n    skills:\n      byRuntime:\n        clade: [a]\n", []string{`:5: lanes.ops.skills.byRuntime.clade: unknown key (did you mean "claude"?)`}},
		{"misspelt skills key", "skills:\n  byrole: {}\n", []string{`:2: skills.byrole: unknown key (did you mean "byRole"?)`}},
		{"skills evaluator role", "skills:\n  byRole:\n    evaluator: [a]\n", []string{":3: skills.byRole.evaluator: renamed to skills.byRole.cont-qa"}},
		{"misspelt role default", "runtimePolicy:\n  defaultExecutorByRole:\n    implemntation: codex\n", []string{":3: runtimePolicy.defaultExecutorByRole.implemntation: unknown key"}},
		{"misspelt flat lane role default", "lanes:\n  ops:\n    defaultExecutorByRole:\n      desgin: claude\n", []string{`:4: lanes.ops.defaultExecutorByRole.desgin: unknown key (did you mean "design"?)`}},
		{"vendor env not a mapping", "executors:\n  codex:\n    env: [A]\n", []string{":3: executors.codex.env: want a mapping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := yamlRepo(t, tc.yaml)
			c, err := Load(dir, nil)
			if err == nil {
				t.Fatalf("Load succeeded (%+v), want error", c)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error %v is not a *config.Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not contain %q", err, w)
				}
			}
		})
	}
}

// Reference-only keys are accepted in YAML too, at the top level and in
// lanes; a typo next to them is still an error.
func TestReferenceOnlyKeysAccepted(t *testing.T) {
	body := `planner: {agentic: {defaultMaxWaves: 3}}
skills: {dir: skills}
waveControl: {enabled: false}
paths: {terminalsPath: .vscode/terminals.json}
validation:
  testCommand: make test
  autoClosure: {allowAutoDocProjection: true}
executors:
  profiles:
    x: {id: claude, claude: {strictMcpConfig: true}}
lanes:
  ops:
    skills: {base: [a]}
    validation: {bootstrapPassConditions: {requireA0Verdict: true}}
`
	dir := yamlRepo(t, body)
	mustLoad(t, dir, nil)
	dir = yamlRepo(t, body+"    skils: {}\n")
	if _, err := Load(dir, nil); err == nil || !strings.Contains(err.Error(), ":15: lanes.ops.skils: unknown key") {
		t.Errorf("err = %v, want unknown key lanes.ops.skils at line 15", err)
	}
}

func TestScalarForms(t *testing.T) {
	dir := yamlRepo(t, `executors:
  codex:
    config: model_reasoning_effort=high
    search: "yes"
  profiles:
    Fast:
      id: codex
      fallbacks: claude, opencode
runtime:
  timeoutMinutes: "30"
`)
	c := mustLoad(t, dir, nil)
	if got := c.Executors.Codex.Config; !reflect.DeepEqual(got, []string{"model_reasoning_effort=high"}) {
		t.Errorf("codex.config = %q", got)
	}
	if c.Executors.Codex.Search == nil || !*c.Executors.Codex.Search {
		t.Errorf("codex.search = %v, want true", deref(c.Executors.Codex.Search))
	}
	if got := c.Executors.Profiles["fast"].Fallbacks; !reflect.DeepEqual(got, []string{"claude", "opencode"}) {
		t.Errorf("profile fast (lower-cased) fallbacks = %q", got)
	}
	if c.Runtime.TimeoutMinutes != 30 {
		t.Errorf("timeoutMinutes = %d", c.Runtime.TimeoutMinutes)
	}
}

// An alias bomb under a free-form key must fail fast, not expand.
func TestAliasBombIsRejected(t *testing.T) {
	var b strings.Builder
	b.WriteString("executors:\n  claude:\n    settingsJson:\n      a: &a [x,x,x,x,x,x,x,x,x]\n")
	prev := "a"
	for _, name := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		b.WriteString("      " + name + ": &" + name + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n")
		prev = name
	}
	_, err := Load(yamlRepo(t, b.String()), nil)
	if err == nil || !strings.Contains(err.Error(), "document too large") {
		t.Errorf("err = %v, want document too large", err)
	}
}

func TestInheritedErrorReportedOnce(t *testing.T) {
	_, err := Load(yamlRepo(t, "executors:\n  default: gpt\nlanes:\n  a: {}\n  b: {}\n"), nil)
	if err == nil {
		t.Fatal("Load succeeded")
	}
	if n := strings.Count(err.Error(), "executors.default"); n != 1 {
		t.Errorf("executors.default reported %d times:\n%v", n, err)
	}
}

func TestUnknownEnvSuggestsTheNearestName(t *testing.T) {
	got := UnknownEnv([]string{
		"WAVE_RUNTIME_HEARTBEAT_INTERVL_MS=5", "WAVE_LANE=main", "WAVE_REPO_ROOT=/x",
		"WAVE_EXECUTORS_DEFAULT=local", "WAVE_TOTALLY_DIFFERENT=1", "HOME=/root", "WAVE_\x1b[2J=1",
	})
	want := []string{
		`environment variable "WAVE_\x1b[2J" is not a wave-orchestrator setting and is ignored`,
		"environment variable WAVE_RUNTIME_HEARTBEAT_INTERVL_MS is not a wave-orchestrator setting and is ignored; did you mean WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS?",
		"environment variable WAVE_TOTALLY_DIFFERENT is not a wave-orchestrator setting and is ignored",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// `executors.env.scrub: []` turns scrubbing off, in every lane and through
// a lane override; leaving it out keeps the default list (nil).
func TestEmptyScrubListIsKept(t *testing.T) {
	dir := yamlRepo(t, "executors:\n  env:\n    scrub: []\nlanes:\n  ops:\n    executors:\n      default: claude\n  dev:\n    executors:\n      env:\n        scrub: [X_ONE]\n")
	c := mustLoad(t, dir, nil)
	for _, name := range []string{"main", "ops"} {
		if s := mustLane(t, c, dir, name).Executors.Env.Scrub; s == nil || len(s) != 0 {
			t.Errorf("lane %s scrub = %#v, want an empty, non-nil list", name, s)
		}
	}
	if s := mustLane(t, c, dir, "dev").Executors.Env.Scrub; !reflect.DeepEqual(s, []string{"X_ONE"}) {
		t.Errorf("lane dev scrub = %#v", s)
	}
	dir = yamlRepo(t, "executors:\n  default: local\n")
	if s := mustLane(t, mustLoad(t, dir, nil), dir, "").Executors.Env.Scrub; len(s) != 2 {
		t.Errorf("default scrub = %#v, want the default list", s)
	}
}

// executors.<vendor>.env maps load, and a lane's entries merge key by key.
func TestVendorEnvLoadsAndMerges(t *testing.T) {
	dir := yamlRepo(t, "executors:\n  claude:\n    env:\n      IS_SANDBOX: \"1\"\n      BASE: top\nlanes:\n  ops:\n    executors:\n      claude:\n        env:\n          BASE: ops\n")
	c := mustLoad(t, dir, nil)
	if e := mustLane(t, c, dir, "main").Executors.Claude.Env; !reflect.DeepEqual(e, map[string]string{"IS_SANDBOX": "1", "BASE": "top"}) {
		t.Errorf("main claude env %v", e)
	}
	if e := mustLane(t, c, dir, "ops").Executors.Claude.Env; !reflect.DeepEqual(e, map[string]string{"IS_SANDBOX": "1", "BASE": "ops"}) {
		t.Errorf("ops claude env %v", e)
	}
}

// Maps with a fixed key set accept their keys in any case (the reference
// lower-cases them), and role defaults are looked up by lower-case role.
func TestFixedKeyMapsAcceptTheirKeys(t *testing.T) {
	dir := yamlRepo(t, "skills:\n  dir: skills\n  base: [a]\n  byRole: {Implementation: [b], cont-qa: [c]}\n  byRuntime: {codex: [d]}\n  byDeployKind: {railway-cli: [e], my-own-kind: [f]}\n"+
		"runtimePolicy:\n  defaultExecutorByRole: {Implementation: claude, cont-eval: codex}\n")
	l := mustLane(t, mustLoad(t, dir, nil), dir, "")
	if got := l.RuntimePolicy.DefaultExecutorByRole["implementation"]; got != "claude" {
		t.Fatalf("role default for implementation = %q (%v)", got, l.RuntimePolicy.DefaultExecutorByRole)
	}
}

// The stall window is minutes plus seconds; the log cap may be turned off.
func TestSilenceAndLogCap(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wave.config.yaml"), []byte("runtime:\n  silenceMinutes: 2\n  silenceSeconds: 30\n  maxLogBytes: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := mustLoad(t, dir, nil)
	if got := c.Runtime.Silence(); got != 150*time.Second {
		t.Errorf("silence = %v, want 2m30s", got)
	}
	if c.Runtime.MaxLogBytes != 0 {
		t.Errorf("maxLogBytes = %d, want 0 (off)", c.Runtime.MaxLogBytes)
	}
	if d := mustLoad(t, t.TempDir(), nil).Runtime; d.Silence() != 0 || d.MaxLogBytes != DefaultMaxLogBytes {
		t.Errorf("defaults: silence %v, maxLogBytes %d", d.Silence(), d.MaxLogBytes)
	}
}

// A command key given as a string is refused at load with its line: it
// would otherwise run a program named "make test".
func TestArgvKeysWantLists(t *testing.T) {
	dir := yamlRepo(t, "backlog:\n  verify: make test\n")
	_, err := Load(dir, func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), ":2: backlog.verify: want a command as a list of words") {
		t.Fatalf("err = %v", err)
	}
	dir = yamlRepo(t, "backlog:\n  verify: [make, test]\n  probe:\n    argv: [claude, -p, ok]\n")
	c := mustLoad(t, dir, nil)
	if got := c.Backlog.Verify; len(got) != 2 || got[1] != "test" {
		t.Fatalf("verify = %v", got)
	}
}

// The transient-failure window defaults to 30 minutes; seconds, when
// set, win (a tiny window for tests); a negative value is refused.
func TestTransientRetryWindow(t *testing.T) {
	if got := mustLoad(t, t.TempDir(), nil).Backlog.TransientRetry(); got != 30*time.Minute {
		t.Errorf("default window = %v, want 30m", got)
	}
	c := mustLoad(t, yamlRepo(t, "backlog:\n  transientRetryMinutes: 5\n  transientRetrySeconds: 2\n"), nil)
	if got := c.Backlog.TransientRetry(); got != 2*time.Second {
		t.Errorf("window = %v, want 2s", got)
	}
	c = mustLoad(t, yamlRepo(t, "backlog:\n  transientRetryMinutes: 5\n"), nil)
	if got := c.Backlog.TransientRetry(); got != 5*time.Minute {
		t.Errorf("window = %v, want 5m", got)
	}
	_, err := Load(yamlRepo(t, "backlog:\n  transientRetryMinutes: -1\n"), func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), ":2: backlog.transientRetryMinutes: must be >= 0, got -1") {
		t.Errorf("negative window: %v", err)
	}
}

// EnvName follows a key through the type: it names exactly the variables
// the environment can set (the ones envVars lists), and nothing else.
func TestEnvNameNamesExactlyTheSettableKeys(t *testing.T) {
	settable := map[string]string{}
	for _, ev := range envVars() {
		settable[ev.Key] = ev.Name
		if name, ok := EnvName(ev.Key); !ok || name != ev.Name {
			t.Errorf("EnvName(%q) = %q, %v; want %q", ev.Key, name, ok, ev.Name)
		}
	}
	if len(settable) < 20 {
		t.Fatalf("only %d settable keys listed", len(settable))
	}
	for _, key := range []string{"runtime", "lanes", "lanes.main", "runtime.nope", "nope", "", "executors.claude", "runtime.heartbeatIntervalMs.x"} {
		if name, ok := EnvName(key); ok {
			t.Errorf("EnvName(%q) = %q: not a key the environment can set", key, name)
		}
	}
}
