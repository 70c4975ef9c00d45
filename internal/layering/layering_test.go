package layering

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

const module = "github.com/wave-orchestrator/wave-orchestrator"

// TestNoImportRunsBackUp fails when a package under dir D imports, directly
// or not, a package outside D that itself depends on D (as wave/manifest
// did through roles, which imports wave): such a package belongs beside D,
// not inside it.
func TestNoImportRunsBackUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		set := map[string]bool{}
		for _, d := range f[1:] {
			if strings.HasPrefix(d, module+"/") {
				set[d] = true
			}
		}
		deps[f[0]] = set
	}
	if len(deps) < 10 {
		t.Fatalf("go list found %d packages", len(deps))
	}
	for p, ds := range deps {
		for parent := path.Dir(p); strings.HasPrefix(parent, module+"/"); parent = path.Dir(parent) {
			if _, ok := deps[parent]; !ok {
				continue
			}
			for q := range ds {
				if q != parent && !strings.HasPrefix(q, parent+"/") && deps[q][parent] {
					t.Errorf("%s (inside %s) imports %s, which imports %s", p, parent, q, parent)
				}
			}
		}
	}
}
