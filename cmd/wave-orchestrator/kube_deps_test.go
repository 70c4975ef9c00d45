package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/e2etest"
)

// heavyClientGo are packages the binary must not link: the all-groups
// clientset and scheme, the informer factory, the generated listers,
// discovery and what comes with them register every Kubernetes API group
// (or protobuf descriptors) before main, in every process of the binary —
// `version` and each `agent-run` runner included — whether it touches a
// cluster or not. Package kube talks to the few resources it uses through
// REST clients instead (kube/api.go).
var heavyClientGo = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/listers",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/gentype",
	"k8s.io/client-go/testing",
	"k8s.io/client-go/applyconfigurations",
	"google.golang.org/protobuf",
	"github.com/google/gnostic-models",
}

func TestBinaryLinksOnlyTheClientGoItUses(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the binary's packages:", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderrOf(err))
	}
	importers := map[string][]string{} // heavy package -> who imports it
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 || heavy(f[0]) {
			continue
		}
		for _, imp := range f[1:] {
			if heavy(imp) {
				importers[imp] = append(importers[imp], f[0])
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(importers)) {
		t.Errorf("the binary links %s (imported by %s): it initialises before main in every process", pkg, strings.Join(importers[pkg], ", "))
	}
}

func heavy(pkg string) bool {
	for _, h := range heavyClientGo {
		if pkg == h || strings.HasPrefix(pkg, h+"/") {
			return true
		}
	}
	return false
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// A reachable text/template execution (cobra runs one for a custom
// version, help or usage template) makes the linker keep every exported
// method of every type, which for the Kubernetes API types is a third of
// the binary that every process pages in.
func TestBinaryExecutesNoTextTemplate(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to read the binary's symbols:", err)
	}
	out, err := exec.Command(goBin, "tool", "nm", e2etest.Bin()).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, stderrOf(err))
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "text/template.(*Template).Execute") {
			t.Fatalf("the binary can execute a text/template (%s): a custom cobra template is set somewhere", strings.TrimSpace(line))
		}
	}
}
