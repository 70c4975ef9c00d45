//go:build refparity

package refparity_test

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/paritytest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

const refPackage = "@chllming/wave-orchestration@0.9.15"

// TestReferenceExamples runs the reference and ours on repositories made of
// the package's own files and compares the manifests value by value
// (executorResolved included; generatedAt, docs, skillsResolved and
// context7Resolved left out, which ours does not produce or lists apart).
func TestReferenceExamples(t *testing.T) {
	pkg := fetchPackage(t)
	t.Run("config", func(t *testing.T) { checkConfig(t, pkg) })

	examples, err := filepath.Glob(filepath.Join(pkg, "docs/plans/examples/*.md"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no example waves in the package (%v)", err)
	}
	for _, ex := range examples {
		name := strings.TrimSuffix(filepath.Base(ex), ".md")
		src := readFile(t, ex)
		t.Run("example/"+name, func(t *testing.T) { compareExample(t, pkg, src) })
		if fix, ok := exampleFixups[name]; ok {
			t.Run("example/"+name+"+fixups", func(t *testing.T) { compareExample(t, pkg, fixup(t, src, fix)) })
		}
	}

	// The package's own plan waves under its own config, every rule on:
	// the init wave alone, then all of them.
	waves, err := filepath.Glob(filepath.Join(pkg, "docs/plans/waves/wave-*.md"))
	if err != nil || len(waves) == 0 {
		t.Fatalf("no plan waves in the package (%v)", err)
	}
	t.Run("init-wave-0", func(t *testing.T) {
		root := refRepo(t, pkg, nil)
		writeFile(t, filepath.Join(root, "docs/plans/waves/wave-0.md"), readFile(t, filepath.Join(pkg, "docs/plans/waves/wave-0.md")))
		compare(t, pkg, root)
	})
	t.Run("plan-waves", func(t *testing.T) {
		root := refRepo(t, pkg, nil)
		for _, w := range waves {
			writeFile(t, filepath.Join(root, "docs/plans/waves", filepath.Base(w)), readFile(t, w))
		}
		compare(t, pkg, root)
	})
}

// exampleFixups are the edits that make an example the reference rejects
// as shipped acceptable to it, so that both tools' manifests of it can be
// compared: a missing closure role prompt, a prose line in a skills list.
var exampleFixups = map[string][][2]string{
	"wave-benchmark-improvement": {
		{`(## Agent A0: cont-QA\n)`, "$1\n### Role prompts\n\n- docs/agents/wave-cont-qa-role.md\n"},
		{`(## Agent E0: cont-EVAL\n)`, "$1\n### Role prompts\n- `docs/agents/wave-cont-eval-role.md`\n"},
	},
	"wave-example-design-handoff": {
		{"\nAdd `tui-design` here too[^\n]*\n", ""},
	},
}

// fixup applies each edit; an edit that no longer matches fails the test,
// so a changed example is noticed.
func fixup(t *testing.T, src []byte, edits [][2]string) []byte {
	t.Helper()
	for _, e := range edits {
		re := regexp.MustCompile(e[0])
		if !re.Match(src) {
			t.Fatalf("fix-up %q matches nothing in the example", e[0])
		}
		src = re.ReplaceAll(src, []byte(e[1]))
	}
	return src
}

func compareExample(t *testing.T, pkg string, src []byte) {
	t.Helper()
	root := refRepo(t, pkg, thresholdsOff)
	addPromotions(t, root, src)
	writeFile(t, filepath.Join(root, "docs/plans/waves", "wave-"+waveNumber(t, src)+".md"), src)
	compare(t, pkg, root)
}

// checkConfig loads the package's starter wave.config.json and checks a
// value of each section against the file itself.
func checkConfig(t *testing.T, pkg string) {
	data := readFile(t, filepath.Join(pkg, "wave.config.json"))
	var raw struct {
		ProjectName string `json:"projectName"`
		Executors   struct {
			Default  string                     `json:"default"`
			Profiles map[string]json.RawMessage `json:"profiles"`
		} `json:"executors"`
		Validation struct {
			RequiredPromptReferences []string `json:"requiredPromptReferences"`
			RequireExitContracts     *int     `json:"requireExitContractsFromWave"`
		} `json:"validation"`
		Lanes map[string]struct {
			RuntimePolicy struct {
				Mix      map[string]int `json:"runtimeMixTargets"`
				Fallback []string       `json:"fallbackExecutorOrder"`
			} `json:"runtimePolicy"`
		} `json:"lanes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "wave.config.json"), data)
	cfg, err := config.Load(root, noEnv)
	if err != nil {
		t.Fatalf("the reference's wave.config.json does not load: %v", err)
	}
	lane, err := cfg.Lane(root, "main")
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, got, want any) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("%s = %s, the file says %s", name, g, w)
		}
	}
	check("projectName", lane.Project, raw.ProjectName)
	check("executors.default", lane.Executors.Default, raw.Executors.Default)
	check("profiles", len(lane.Executors.Profiles), len(raw.Executors.Profiles))
	check("requiredPromptReferences", lane.Validation.RequiredPromptReferences, raw.Validation.RequiredPromptReferences)
	check("requireExitContractsFromWave", lane.Validation.RequireExitContractsFromWave, raw.Validation.RequireExitContracts)
	check("runtimeMixTargets", lane.RuntimePolicy.RuntimeMixTargets, raw.Lanes["main"].RuntimePolicy.Mix)
	check("fallbackExecutorOrder", lane.RuntimePolicy.FallbackExecutorOrder, raw.Lanes["main"].RuntimePolicy.Fallback)
}

func noEnv(string) (string, bool) { return "", false }

// thresholdsOff turns off the rules that need scaffolding an example does
// not bring (required reading docs, components and exit contracts from a
// wave number on).
func thresholdsOff(cfg map[string]any) {
	v, _ := cfg["validation"].(map[string]any)
	if v == nil {
		v = map[string]any{}
		cfg["validation"] = v
	}
	v["requiredPromptReferences"] = []string{}
	for _, k := range []string{"requireDocumentationStewardFromWave", "requireContext7DeclarationsFromWave",
		"requireExitContractsFromWave", "requireIntegrationStewardFromWave",
		"requireComponentPromotionsFromWave", "requireAgentComponentsFromWave"} {
		v[k] = nil
	}
}

// refRepo lays out a repository as the reference's `wave init` leaves it
// (its docs and skills, no plan waves), with its config changed by edit.
func refRepo(t *testing.T, pkg string, edit func(map[string]any)) string {
	t.Helper()
	root := t.TempDir()
	paritytest.CopyTree(t, filepath.Join(pkg, "docs"), filepath.Join(root, "docs"))
	paritytest.CopyTree(t, filepath.Join(pkg, "skills"), filepath.Join(root, "skills"))
	if err := os.RemoveAll(filepath.Join(root, "docs/plans/waves")); err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(pkg, "wave.config.json")), &cfg); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "wave.config.json"), b)
	return root
}

var (
	waveTitleRe = regexp.MustCompile(`(?m)^# Wave (\d+)`)
	promotionRe = regexp.MustCompile(`(?m)^- ([a-z0-9][a-z0-9._-]*): ([a-z-]+)\s*$`)
)

func waveNumber(t *testing.T, src []byte) string {
	m := waveTitleRe.FindSubmatch(src)
	if m == nil {
		t.Fatal("example has no `# Wave N` title")
	}
	return string(m[1])
}

// addPromotions enters the example's component promotions in the matrix,
// as a repository adopting the example would.
func addPromotions(t *testing.T, root string, src []byte) {
	t.Helper()
	text := string(src)
	i := strings.Index(text, "## Component promotions")
	if i < 0 {
		return
	}
	section := text[i+len("## Component promotions"):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	path := filepath.Join(root, "docs/plans/component-cutover-matrix.json")
	var matrix map[string]any
	if err := json.Unmarshal(readFile(t, path), &matrix); err != nil {
		t.Fatal(err)
	}
	comps := matrix["components"].(map[string]any)
	n := waveNumber(t, src)
	for _, m := range promotionRe.FindAllStringSubmatch(section, -1) {
		c, _ := comps[m[1]].(map[string]any)
		if c == nil {
			c = map[string]any{"title": m[1], "canonicalDocs": []string{}, "currentLevel": "inventoried",
				"promotions": []any{}, "proofSurfaces": []string{}}
			comps[m[1]] = c
		}
		c["promotions"] = append(c["promotions"].([]any), map[string]any{"wave": json.Number(n), "target": m[2]})
	}
	b, err := json.MarshalIndent(matrix, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
}

// compare runs both tools' dry-run launch on root: both reject it, or both
// accept it with the same manifest.
func compare(t *testing.T, pkg, root string) {
	t.Helper()
	want, refErr := runReference(t, pkg, root)
	got, ourErr := runOurs(t, root)
	switch {
	case refErr != "" && ourErr != nil:
		t.Logf("both reject it:\nreference: %s\nours: %v", refErr, ourErr)
		return
	case refErr != "":
		t.Fatalf("the reference rejects it, we accept it:\n%s", refErr)
	case ourErr != nil:
		t.Fatalf("the reference accepts it, we reject it:\n%v", ourErr)
	}
	var w, g map[string]any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	for _, m := range []map[string]any{w, g} {
		delete(m, "generatedAt")
		delete(m, "docs")
		for _, wv := range m["waves"].([]any) {
			for _, a := range wv.(map[string]any)["agents"].([]any) {
				delete(a.(map[string]any), "skillsResolved")
				delete(a.(map[string]any), "context7Resolved")
			}
		}
	}
	for _, d := range paritytest.Diff("", w, g) {
		t.Error(d)
	}
}

func runReference(t *testing.T, pkg, root string) ([]byte, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "manifest.json")
	cmd := exec.Command("node", filepath.Join(pkg, "scripts/wave.mjs"), "launch", "--lane", "main", "--dry-run",
		"--no-dashboard", "--no-telemetry", "--no-context7", "--manifest-out", out)
	cmd.Dir = root
	if text, err := cmd.CombinedOutput(); err != nil {
		return nil, lastWaveLine(string(text))
	}
	return readFile(t, out), ""
}

func lastWaveLine(text string) string {
	last := strings.TrimSpace(text)
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "[wave]") {
			last = l
		}
	}
	return last
}

func runOurs(t *testing.T, root string) ([]byte, error) {
	t.Helper()
	cfg, err := config.Load(root, noEnv)
	if err != nil {
		return nil, err
	}
	lane, err := cfg.Lane(root, "main")
	if err != nil {
		return nil, err
	}
	opts := wave.Options{Roles: wave.Roles(lane.Roles), BenchmarkCatalogPath: lane.BenchmarkCatalogPath,
		Context7BundleIndexPath: lane.Context7BundleIndexPath,
		ReadFile:                func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))) }}
	ws, err := wave.LoadDir(root, lane.WavesDir, opts)
	if err != nil {
		return nil, err
	}
	if err := wave.Validate(ws, lane, opts); err != nil {
		return nil, err
	}
	l := launcher.New(launcher.Options{Layout: lanes.New(root, lane.StateRoot, lane.Project, lane.Name), Lane: lane,
		Waves: ws, EndWave: -1, Self: "/usr/local/bin/wave-orchestrator", Out: io.Discard}, nil)
	m, err := l.DryRun()
	if err != nil {
		return nil, err
	}
	return m.Encode()
}
