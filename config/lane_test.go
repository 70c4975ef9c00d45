package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const mergeYAML = `projectName: Demo
executors:
  default: claude
  codex:
    sandbox: workspace-write
    search: true
  claude:
    model: opus
    outputFormat: json
  profiles:
    fast: {id: codex, budget: {minutes: 10}}
    review: {id: claude}
roles:
  contQaAgentId: Q0
validation:
  requireExitContractsFromWave: 3
  gateModeThresholds: {standard: 2}
  autoClosure: {allowInferredIntegration: true}
runtimePolicy:
  fallbackExecutorOrder: [claude, codex]
lanes:
  ops:
    executors:
      codex:
        search: false
      profiles:
        fast: {id: opencode}
    roles:
      integrationAgentId: I8
    validation:
      requireExitContractsFromWave: null
      autoClosure: {allowInferredIntegration: false}
    runtimeMixTargets: {claude: 3}
  custom:
    wavesDir: plans/custom-waves
    stateRoot: .state
    sharedPlanDocs: [docs/custom/state.md]
`

func TestLaneMerge(t *testing.T) {
	dir := yamlRepo(t, mergeYAML)
	c := mustLoad(t, dir, nil)
	main := mustLane(t, c, dir, "")
	ops := mustLane(t, c, dir, "ops")
	other := mustLane(t, c, dir, "unconfigured")
	custom := mustLane(t, c, dir, "custom")
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"main project", main.Project, "Demo"},
		{"main codex search", deref(main.Executors.Codex.Search), true},
		{"main fast profile", main.Executors.Profiles["fast"].ID, "codex"},
		{"main exit contracts", deref(main.Validation.RequireExitContractsFromWave), 3},
		{"main gate modes filled field-wise", main.Validation.GateModeThresholds, Modes{0, 2, 10}},
		{"main fallback order", main.RuntimePolicy.FallbackExecutorOrder, []string{"claude", "codex"}},

		// Executors merge per vendor key: ops turns search off (a zero
		// value) but keeps the top-level sandbox and claude settings.
		{"ops codex search", deref(ops.Executors.Codex.Search), false},
		{"ops codex sandbox", deref(ops.Executors.Codex.Sandbox), "workspace-write"},
		{"ops claude model", deref(ops.Executors.Claude.Model), "opus"},
		{"ops claude output", deref(ops.Executors.Claude.OutputFormat), "json"},
		{"ops claude permission default", deref(ops.Executors.Claude.PermissionMode), "bypassPermissions"},
		{"ops default executor", ops.Executors.Default, "claude"},
		// Profiles merge by name; a lane's profile replaces the whole entry.
		{"ops fast profile", ops.Executors.Profiles["fast"].ID, "opencode"},
		{"ops fast budget replaced", ops.Executors.Profiles["fast"].Budget, (*Budget)(nil)},
		{"ops review profile kept", ops.Executors.Profiles["review"].ID, "claude"},
		// Roles and validation merge field by field; null disables.
		{"ops contQa kept", ops.Roles.ContQaAgentID, "Q0"},
		{"ops integration", ops.Roles.IntegrationAgentID, "I8"},
		{"ops doc steward default", ops.Roles.DocumentationAgentID, "A9"},
		{"ops exit contracts disabled", deref(ops.Validation.RequireExitContractsFromWave), nil},
		{"ops context7 kept", deref(ops.Validation.RequireContext7DeclarationsFromWave), 6},
		{"ops auto closure off", ops.Validation.AutoClosure.AllowInferredIntegration, false},
		{"ops gate modes kept", ops.Validation.GateModeThresholds, Modes{0, 2, 10}},
		{"ops mix", ops.RuntimePolicy.RuntimeMixTargets, map[string]int{"claude": 3}},
		{"ops fallback inherited", ops.RuntimePolicy.FallbackExecutorOrder, []string{"claude", "codex"}},

		// Directories: non-default lanes live under docs/<lane>.
		{"main waves", main.WavesDir, "docs/plans/waves"},
		{"ops docs", ops.DocsDir, "docs/ops"},
		{"ops waves", ops.WavesDir, "docs/ops/plans/waves"},
		{"ops shared docs", ops.SharedPlanDocs, []string{"docs/ops/plans/current-state.md", "docs/ops/plans/master-plan.md", "docs/ops/plans/migration.md"}},
		{"ops matrix follows reference", ops.MatrixDocPath, "docs/plans/component-cutover-matrix.md"},
		{"unconfigured waves", other.WavesDir, "docs/unconfigured/plans/waves"},
		{"unconfigured executor", other.Executors.Default, "claude"},
		{"custom waves", custom.WavesDir, "plans/custom-waves"},
		{"custom state", custom.StateRoot, ".state"},
		{"custom shared docs", custom.SharedPlanDocs, []string{"docs/custom/state.md"}},
		{"repo root absolute", filepath.IsAbs(main.RepoRoot), true},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
	// Resolving a lane must not leak its overrides into the top level.
	if again := mustLane(t, c, dir, ""); again.Executors.Profiles["fast"].ID != "codex" ||
		deref(again.Executors.Codex.Search) != true {
		t.Errorf("lane merge mutated the top level: %+v", again.Executors)
	}
}

func TestMultiLaneRepoModeMovesDefaultLane(t *testing.T) {
	dir := yamlRepo(t, "repoMode: multi-lane\ndefaultLane: core\n")
	l := mustLane(t, mustLoad(t, dir, nil), dir, "")
	if l.Name != "core" || l.WavesDir != "docs/core/plans/waves" {
		t.Errorf("lane %q wavesDir %q, want core docs/core/plans/waves", l.Name, l.WavesDir)
	}
}

// A Config built in code (no file) merges its typed lane overrides too.
func TestLaneMergeOfConfigBuiltInCode(t *testing.T) {
	c := Default()
	c.Lanes = map[string]LaneConfig{"fast": {
		WavesDir:  "waves",
		Executors: &Executors{Default: "local"},
		Roles:     &Roles{ContQaAgentID: "QA"},
	}}
	l := mustLane(t, c, t.TempDir(), "fast")
	if l.WavesDir != "waves" || l.Executors.Default != "local" || l.Roles.ContQaAgentID != "QA" ||
		l.Roles.IntegrationAgentID != "A8" || deref(l.Executors.Codex.Command) != "codex" {
		t.Errorf("merged lane = %+v", l)
	}
}

func TestInvalidLaneName(t *testing.T) {
	c := Default()
	for _, name := range []string{"Main", "a b", "-x", "../x"} {
		if _, err := c.Lane(t.TempDir(), name); err == nil {
			t.Errorf("Lane(%q) succeeded, want error", name)
		}
	}
}

func TestEnvOverrides(t *testing.T) {
	dir := yamlRepo(t, "defaultLane: fromfile\nruntime:\n  heartbeatIntervalMs: 1000\n")
	for _, tc := range []struct {
		env   map[string]string
		check func(c *Config) any
		want  any
	}{
		{map[string]string{"WAVE_DEFAULT_LANE": "ops"}, func(c *Config) any { return c.DefaultLane }, "ops"},
		{map[string]string{}, func(c *Config) any { return c.DefaultLane }, "fromfile"},
		{map[string]string{"WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS": "250"}, func(c *Config) any { return c.Runtime.HeartbeatIntervalMs }, 250},
		{map[string]string{"WAVE_EXECUTORS_DEFAULT": "local"}, func(c *Config) any { return c.Executors.Default }, "local"},
		{map[string]string{"WAVE_EXECUTORS_CLAUDE_PERMISSION_MODE": "plan"}, func(c *Config) any { return deref(c.Executors.Claude.PermissionMode) }, "plan"},
		{map[string]string{"WAVE_EXECUTORS_ENV_SCRUB": "A, B"}, func(c *Config) any { return c.Executors.Env.Scrub }, []string{"A", "B"}},
		{map[string]string{"WAVE_VALIDATION_REQUIRE_EXIT_CONTRACTS_FROM_WAVE": "null"}, func(c *Config) any { return deref(c.Validation.RequireExitContractsFromWave) }, nil},
		{map[string]string{"WAVE_VALIDATION_REQUIRE_CONTEXT7_DECLARATIONS_FROM_WAVE": "2"}, func(c *Config) any { return deref(c.Validation.RequireContext7DeclarationsFromWave) }, 2},
		{map[string]string{"WAVE_VALIDATION_AUTO_CLOSURE_ALLOW_AUTO_DOC_NO_CHANGE": "yes"}, func(c *Config) any { return c.Validation.AutoClosure.AllowAutoDocNoChange }, true},
		{map[string]string{"WAVE_GITHUB_TOKEN_ENV": "GH_PAT"}, func(c *Config) any { return c.GitHub.TokenEnv }, "GH_PAT"},
		{map[string]string{"WAVE_PATHS_COMPONENT_CUTOVER_MATRIX_JSON_PATH": "m.json"}, func(c *Config) any { return c.Paths.ComponentCutoverMatrixJSONPath }, "m.json"},
	} {
		c := mustLoad(t, dir, tc.env)
		if got := tc.check(c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("env %v: got %#v, want %#v", tc.env, got, tc.want)
		}
	}
}

func TestEnvOverrideErrorsNameTheVariable(t *testing.T) {
	dir := t.TempDir()
	for env, want := range map[string]string{
		"WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS": `env WAVE_RUNTIME_HEARTBEAT_INTERVAL_MS: runtime.heartbeatIntervalMs: want an integer, got "fast"`,
		"WAVE_EXECUTORS_CODEX_JSON":          `env WAVE_EXECUTORS_CODEX_JSON: executors.codex.json: want true or false`,
	} {
		_, err := Load(dir, mapEnv(map[string]string{env: "fast"}))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", env, err, want)
		}
	}
	// A well-formed but invalid value is reported against the variable.
	_, err := Load(dir, mapEnv(map[string]string{"WAVE_EXECUTORS_DEFAULT": "gpt"}))
	if err == nil || !strings.Contains(err.Error(), "env WAVE_EXECUTORS_DEFAULT: executors.default:") {
		t.Errorf("err = %v, want it to name WAVE_EXECUTORS_DEFAULT", err)
	}
}

func TestEnvVarNamesAreUnique(t *testing.T) {
	seen := map[string]string{}
	for _, ev := range envVars() {
		if prev, ok := seen[ev.Name]; ok {
			t.Errorf("%s maps both %s and %s", ev.Name, prev, ev.Key)
		}
		seen[ev.Name] = ev.Key
	}
	if len(seen) < 60 {
		t.Errorf("only %d env vars; the walk missed sections", len(seen))
	}
}

func TestUpperSnake(t *testing.T) {
	for in, want := range map[string]string{
		"defaultLane":                                    "DEFAULT_LANE",
		"runtime.heartbeatIntervalMs":                    "RUNTIME_HEARTBEAT_INTERVAL_MS",
		"validation.requireContext7DeclarationsFromWave": "VALIDATION_REQUIRE_CONTEXT7_DECLARATIONS_FROM_WAVE",
		"github.apiUrl":                                  "GITHUB_API_URL",
		"paths.componentCutoverMatrixJsonPath":           "PATHS_COMPONENT_CUTOVER_MATRIX_JSON_PATH",
		"a.HTTPServer":                                   "A_HTTP_SERVER",
	} {
		if got := upperSnake(in); got != want {
			t.Errorf("upperSnake(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUnreadableConfigIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "wave.config.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir, nil); err == nil {
		t.Error("Load with a directory named wave.config.yaml succeeded")
	}
}

func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"", mergeYAML, "a: &a [*a]\n", "runtime: {heartbeatIntervalMs: 1e400}\n",
		"executors: {claude: {settingsJson: {x: .nan}}}\n", "lanes: {ops: null}\n",
		"x: &x {a: 1}\ny: {<<: *x}\n", "[1, 2]\n", "- a\n", "\"\\t\": 1\n",
		"lanes:\n  ops:\n    executors: {profiles: {p: {budget: {minutes: -1}}}}\n",
	} {
		f.Add([]byte(seed))
	}
	if data, err := os.ReadFile("testdata/every-key.wave.config.json"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "wave.config.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(dir, nil)
		if err == nil {
			if _, err := c.Lane(dir, ""); err != nil {
				t.Fatalf("Load succeeded but default lane fails: %v", err)
			}
		}
	})
}

// The benchmark catalog and Context7 bundle index paths are real settings:
// wave validation reads the files they name (a repo that keeps them
// elsewhere must not be checked against the default paths).
func TestCatalogAndBundleIndexPaths(t *testing.T) {
	dir := repoWith(t, map[string]string{"wave.config.json": `{
  "paths": {"benchmarkCatalogPath": "./evals//catalog.json", "context7BundleIndexPath": "ctx/bundles.json"},
  "lanes": {
    "ops": {"context7BundleIndexPath": "ops/bundles.json"},
    "qa": {"paths": {"benchmarkCatalogPath": "qa/catalog.json"}}
  }
}`})
	c := mustLoad(t, dir, nil)
	for _, tc := range []struct {
		lane, catalog, bundles string
	}{
		{"main", "evals/catalog.json", "ctx/bundles.json"},
		{"ops", "evals/catalog.json", "ops/bundles.json"},
		{"qa", "qa/catalog.json", "ctx/bundles.json"},
	} {
		l := mustLane(t, c, dir, tc.lane)
		if l.BenchmarkCatalogPath != tc.catalog || l.Context7BundleIndexPath != tc.bundles {
			t.Errorf("lane %s: catalog %q, bundles %q; want %q, %q", tc.lane, l.BenchmarkCatalogPath, l.Context7BundleIndexPath, tc.catalog, tc.bundles)
		}
	}

	// Unset, both default to the reference's fixed paths in every lane,
	// even when docsDir moves.
	dir = yamlRepo(t, "paths: {docsDir: documentation}\nrepoMode: multi-lane\n")
	for _, name := range []string{"main", "ops"} {
		l := mustLane(t, mustLoad(t, dir, nil), dir, name)
		if l.BenchmarkCatalogPath != "docs/evals/benchmark-catalog.json" || l.Context7BundleIndexPath != "docs/context7/bundles.json" {
			t.Errorf("lane %s defaults: catalog %q, bundles %q", name, l.BenchmarkCatalogPath, l.Context7BundleIndexPath)
		}
	}

	dir = yamlRepo(t, "paths: {benchmarkCatalogPath: ../outside.json}\n")
	if _, err := Load(dir, nil); err == nil || !strings.Contains(err.Error(), "wave.config.yaml:1: paths.benchmarkCatalogPath") ||
		!strings.Contains(err.Error(), "inside the repository") {
		t.Errorf("err = %v, want wave.config.yaml:1: paths.benchmarkCatalogPath must stay inside the repository", err)
	}
}
