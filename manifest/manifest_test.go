package manifest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// copyTree copies the example repo into a temp dir so the test reads real
// files the way a launch does.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestManifestMatchesReference builds the manifest of the reference-spec
// §2.9 example and compares it with what the reference wrote for the same
// files (executorResolved, skills, Context7 resolution and the docs list
// removed: other packages own those; generatedAt normalised).
func TestManifestMatchesReference(t *testing.T) {
	root := copyTree(t, "testdata/example")
	waves, err := wave.LoadDir(root, "docs/plans/waves", wave.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var r config.Roles
	m := Build(waves, func(w *wave.Wave) roles.Bindings { return roles.Bind(w, r) }, nil)
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

func TestDocsListsFilesSorted(t *testing.T) {
	root := copyTree(t, "testdata/example")
	docs, err := Docs(os.DirFS(root), "docs")
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 5 || docs[0].Path != "docs/agents/wave-cont-qa-role.md" || docs[4].Path != "docs/plans/waves/wave-0.md" {
		t.Fatalf("docs = %+v", docs)
	}
	// The reference recorded this file's hash; ours must agree.
	if docs[0].SHA256 != "91883a8373ddae7897f05b7751cbd8a650fab017f7e4e9011055f37c6712b043" || docs[0].Bytes != 2825 {
		t.Errorf("cont-qa role doc = %+v", docs[0])
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
