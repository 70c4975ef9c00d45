package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The reference sorts the docs list with localeCompare; the expected order
// here is what Node prints for the same paths.
func TestDocsOrderAndHashLikeReference(t *testing.T) {
	root := t.TempDir()
	files := []string{"docs/README.md", "docs/plans/waves/wave-0.md", "docs/reference/runtime-config/README.md",
		"docs/reference/runtime-config/opencode.md", "docs/a_b.md", "docs/a-b.md", "docs/ab.md", "docs/Ab.md", "docs/a.b.md"}
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A binary file is hashed as the reference reads it: UTF-8 text with
	// U+FFFD for invalid bytes.
	if err := os.WriteFile(filepath.Join(root, "docs/image.png"), []byte{0x89, 'P', 'N', 'G'}, 0o644); err != nil {
		t.Fatal(err)
	}
	// Symlinks are not files to the reference's walk.
	if err := os.Symlink("README.md", filepath.Join(root, "docs/link.md")); err != nil {
		t.Fatal(err)
	}
	docs, err := Docs(os.DirFS(root), "docs")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range docs {
		got = append(got, d.Path)
	}
	want := []string{"docs/a_b.md", "docs/a-b.md", "docs/a.b.md", "docs/ab.md", "docs/Ab.md", "docs/image.png",
		"docs/plans/waves/wave-0.md", "docs/README.md", "docs/reference/runtime-config/opencode.md", "docs/reference/runtime-config/README.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("docs order:\n got %q\nwant %q", got, want)
	}
	png := []byte("\uFFFDPNG")
	sum := sha256.Sum256(png)
	if d := docs[5]; d.Bytes != len(png) || d.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("image.png: %d bytes, sha %s; want the hash of its UTF-8 decoding (%d bytes)", d.Bytes, d.SHA256, len(png))
	}
}
