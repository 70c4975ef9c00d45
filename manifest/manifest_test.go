package manifest

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/paritytest"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// TestManifestMatchesReference builds the manifest of the example repo
// under testdata/example and compares it byte for byte with what the
// reference wrote for the same files (scripts/regen-parity-goldens.mjs:
// executorResolved nulled, skills and Context7 resolutions and the docs
// list removed, since other packages own those; generatedAt normalised).
func TestManifestMatchesReference(t *testing.T) {
	root := t.TempDir()
	paritytest.CopyTree(t, "testdata/example", root)
	cfg, err := config.Load(root, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	lane, err := cfg.Lane(root, "main")
	if err != nil {
		t.Fatal(err)
	}
	waves, err := wave.LoadDir(root, lane.WavesDir, wave.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := Build(waves, func(w *wave.Wave) roles.Bindings { return roles.Bind(w, lane.Roles) }, nil)
	m.SetLane("main")
	m.GeneratedAt = "GENERATED"
	got, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/example.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("manifest differs from the reference's:\n%s", diff(string(want), string(got)))
	}
}

// TestDocsListsFilesSorted compares the docs list of the example repo,
// paths, sizes and hashes in order, with the one the reference recorded.
func TestDocsListsFilesSorted(t *testing.T) {
	root := t.TempDir()
	paritytest.CopyTree(t, "testdata/example", root)
	docs, err := Docs(os.DirFS(root), "docs")
	if err != nil {
		t.Fatal(err)
	}
	var want []Doc
	b, err := os.ReadFile("testdata/example.docs.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) < 5 {
		t.Fatalf("example.docs.json lists %d files; regenerate it", len(want))
	}
	if !reflect.DeepEqual(docs, want) {
		t.Errorf("docs = %+v\nthe reference recorded %+v", docs, want)
	}
}

// diff shows the first differing line with context.
func diff(want, got string) string {
	wl, gl := bytes.Split([]byte(want), []byte("\n")), bytes.Split([]byte(got), []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + trunc(string(w)) + "\n  got: " + trunc(string(g))
		}
	}
	return ""
}

func trunc(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
