package executor_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/paritytest"
	"github.com/wave-orchestrator/wave-orchestrator/internal/redact"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// parityBase is the role prompts, matrix, catalog and bundle index with a
// config whose scaffold thresholds are off that the manifest parity cases
// share; want.json comes from scripts/regen-parity-goldens.mjs.
const parityBase = "../manifest/testdata/parity/base"

// TestExecutorResolvedParity runs the dry-run launch of every repository
// under testdata/parity/<case> (laid over parityBase; args.txt holds extra
// launch flags) and compares each agent's executorResolved, values and key
// order, with what the reference (0.9.15) wrote for the same repository
// with `wave launch --lane main --dry-run --manifest-out` (want.json).
func TestExecutorResolvedParity(t *testing.T) {
	cases, err := os.ReadDir("testdata/parity")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			dir := filepath.Join("testdata/parity", c.Name())
			root := t.TempDir()
			for _, src := range []string{parityBase, dir} { // a case's own metadata stays out
				paritytest.CopyTree(t, src, root, "want.json", "args.txt")
			}
			var want []resolvedAgent
			readJSON(t, filepath.Join(dir, "want.json"), &want)
			got := dryRunResolved(t, root, cliExecutor(t, dir))
			if len(got) != len(want) {
				t.Fatalf("%d agents, the reference has %d", len(got), len(want))
			}
			for i, w := range want {
				g := got[i]
				name := fmt.Sprintf("wave %d %s", w.Wave, w.AgentID)
				if g.Wave != w.Wave || g.AgentID != w.AgentID {
					t.Fatalf("agent %d is wave %d %s, want %s", i, g.Wave, g.AgentID, name)
				}
				// We redact secrets the reference printed (settingsJson.env, keys).
				ref, err := redact.JSON(w.ExecutorResolved)
				if err != nil {
					t.Fatal(err)
				}
				compareResolved(t, name, ref, g.ExecutorResolved)
			}
		})
	}
}

type resolvedAgent struct {
	Wave             int             `json:"wave"`
	AgentID          string          `json:"agentId"`
	ExecutorResolved json.RawMessage `json:"executorResolved"`
}

// cliExecutor reads `--executor <id>` from args.txt ("" when absent).
func cliExecutor(t *testing.T, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "args.txt"))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) != 2 || f[0] != "--executor" {
		t.Fatalf("args.txt: want `--executor <id>`, got %q", b)
	}
	return f[1]
}

// dryRunResolved loads the repository like `launch --dry-run` and returns
// the executorResolved of every agent of the manifest, in order.
func dryRunResolved(t *testing.T, root, executor string) []resolvedAgent {
	t.Helper()
	cfg, err := config.Load(root, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	lane, err := cfg.Lane(root, "main")
	if err != nil {
		t.Fatal(err)
	}
	opts := wave.Options{Roles: wave.Roles(lane.Roles), BenchmarkCatalogPath: lane.BenchmarkCatalogPath,
		Context7BundleIndexPath: lane.Context7BundleIndexPath,
		ReadFile:                func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))) }}
	ws, err := wave.LoadDir(root, lane.WavesDir, opts)
	if err == nil {
		err = wave.Validate(ws, lane, opts)
	}
	if err != nil {
		t.Fatalf("the reference accepts this repo; we reject it:\n%v", err)
	}
	l := launcher.New(launcher.Options{Layout: lanes.New(root, lane.StateRoot, lane.Project, lane.Name), Lane: lane,
		Waves: ws, EndWave: -1, Executor: executor, Self: "/usr/local/bin/wave-orchestrator", Out: io.Discard}, nil)
	m, err := l.DryRun()
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var man struct {
		Waves []struct {
			Wave   int             `json:"wave"`
			Agents []resolvedAgent `json:"agents"`
		} `json:"waves"`
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	var out []resolvedAgent
	for _, w := range man.Waves {
		for _, a := range w.Agents {
			a.Wave = w.Wave
			out = append(out, a)
		}
	}
	return out
}

// compareResolved reports every value that differs, then, if the values
// agree, whether the key order does.
func compareResolved(t *testing.T, name string, want, got json.RawMessage) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var diffs []string
	diffValues("executorResolved", w, g, &diffs)
	for _, d := range diffs {
		t.Errorf("%s: %s", name, d)
	}
	if len(diffs) > 0 {
		return
	}
	var wc, gc bytes.Buffer
	if err := json.Compact(&wc, want); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&gc, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wc.Bytes(), gc.Bytes()) {
		t.Errorf("%s: same values, different key order\nreference %s\nours      %s", name, wc.Bytes(), gc.Bytes())
	}
}

func diffValues(path string, want, got any, out *[]string) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		for k, wv := range wm {
			gv, ok := gm[k]
			if !ok {
				*out = append(*out, fmt.Sprintf("%s.%s: missing (reference %v)", path, k, wv))
				continue
			}
			diffValues(path+"."+k, wv, gv, out)
		}
		for k, gv := range gm {
			if _, ok := wm[k]; !ok {
				*out = append(*out, fmt.Sprintf("%s.%s: ours only (%v)", path, k, gv))
			}
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		*out = append(*out, fmt.Sprintf("%s: reference %v, ours %v", path, want, got))
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
