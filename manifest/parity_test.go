package manifest_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/paritytest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/redact"
	"github.com/wave-orchestrator/wave-orchestrator/manifest"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// TestReferenceParity builds the manifest of every case under
// testdata/parity/<case> (files laid over testdata/parity/base: our role
// prompts, matrix, catalog, bundle index and a config with the scaffold
// thresholds off) and compares it with the manifest the reference (0.9.15)
// wrote for the same repository: want.json (scripts/regen-parity-goldens.mjs),
// stripped of generatedAt, docs and the executor/skills/Context7
// resolutions. A case the reference rejects has ref-error.txt (its message)
// and rules.txt (the rules we must report) instead. A case it accepts where
// we are stricter on purpose (wave/PARITY.md) keeps want.json and has
// stricter.txt: the rules we report.
func TestReferenceParity(t *testing.T) {
	cases, err := os.ReadDir("testdata/parity")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() || c.Name() == "base" {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata/parity", c.Name())
			root := t.TempDir()
			for _, src := range []string{"testdata/parity/base", dir} { // a case's own metadata stays out
				paritytest.CopyTree(t, src, root, "want.json", "ref-error.txt", "rules.txt", "stricter.txt")
			}
			got, err := buildManifest(root)
			for _, name := range []string{"rules.txt", "stricter.txt"} {
				if rules, rerr := os.ReadFile(filepath.Join(dir, name)); rerr == nil {
					checkRejected(t, err, strings.Fields(string(rules)))
					return
				}
			}
			if err != nil {
				t.Fatalf("the reference accepts this repo; we reject it:\n%v", err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "want.json"))
			if err != nil {
				t.Fatal(err)
			}
			// We redact secrets the reference printed (settingsJson.env, keys).
			if want, err = redact.JSON(want); err != nil {
				t.Fatal(err)
			}
			compareJSON(t, want, got)
		})
	}
}

func buildManifest(root string) ([]byte, error) {
	cfg, err := config.Load(root, func(string) (string, bool) { return "", false })
	if err != nil {
		return nil, err
	}
	lane, err := cfg.Lane(root, "main")
	if err != nil {
		return nil, err
	}
	opts := wave.Options{Roles: lane.Roles, ReadFile: func(rel string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	}}
	ws, err := wave.LoadDir(root, lane.WavesDir, opts)
	if err != nil {
		return nil, err
	}
	if err := wave.Validate(ws, lane, opts); err != nil {
		return nil, err
	}
	m := manifest.Build(ws, func(w *wave.Wave) roles.Bindings { return roles.Bind(w, lane.Roles) }, nil)
	m.SetLane(lane.Name)
	m.Source = manifest.Source(lane.DocsDir)
	return m.Encode()
}

func checkRejected(t *testing.T, err error, rules []string) {
	t.Helper()
	var we *wave.Error
	if !errors.As(err, &we) {
		t.Fatalf("the reference rejects this repo; we returned %v, want a *wave.Error with rules %v", err, rules)
	}
	for _, r := range rules {
		if !we.Has(r) {
			t.Errorf("missing rule %s in:\n%v", r, we)
		}
	}
}

// compareJSON compares the reference's manifest with ours, ignoring what
// the reference alone produces (generatedAt, docs, resolutions).
func compareJSON(t *testing.T, want, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	gm := g.(map[string]any)
	delete(gm, "generatedAt")
	delete(gm, "docs")
	for _, wv := range gm["waves"].([]any) {
		for _, a := range wv.(map[string]any)["agents"].([]any) {
			delete(a.(map[string]any), "executorResolved")
		}
	}
	for _, d := range paritytest.Diff("", w, g) {
		t.Error(d)
	}
}
