//go:build refparity

package refparity_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// fetchPackage unpacks the reference package with npm into a temp dir,
// or returns $WAVE_REF_PACKAGE.
func fetchPackage(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("WAVE_REF_PACKAGE"); p != "" {
		return p
	}
	dir := t.TempDir()
	out, err := exec.Command("npm", "pack", "--silent", refPackage, "--pack-destination", dir).Output()
	if err != nil {
		t.Fatalf("npm pack %s: %v", refPackage, err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		t.Fatalf("npm pack %s printed no file name", refPackage)
	}
	tgz := filepath.Join(dir, lines[len(lines)-1])
	if out, err := exec.Command("tar", "xzf", tgz, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", tgz, err, out)
	}
	return filepath.Join(dir, "package")
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
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
}

// diff records every value of want that got does not hold, by JSON path.
func diff(path string, want, got any, out *[]string) {
	switch wv := want.(type) {
	case map[string]any:
		if gv, ok := got.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range wv {
				keys[k] = true
			}
			for k := range gv {
				keys[k] = true
			}
			sorted := make([]string, 0, len(keys))
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				diff(path+"."+k, wv[k], gv[k], out)
			}
			return
		}
	case []any:
		if gv, ok := got.([]any); ok && len(gv) == len(wv) {
			for i := range wv {
				diff(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i], out)
			}
			return
		}
	}
	if !reflect.DeepEqual(want, got) {
		*out = append(*out, fmt.Sprintf("%s: reference %v, ours %v", path, want, got))
	}
}
