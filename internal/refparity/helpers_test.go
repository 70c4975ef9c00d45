//go:build refparity

package refparity_test

import (
	"os"
	"os/exec"
	"path/filepath"
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
