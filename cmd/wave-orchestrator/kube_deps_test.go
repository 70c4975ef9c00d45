package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// clientGoNarrow are client-go's packages the kubernetes backend is built
// on (package kube): REST clients, the kubeconfig loader (exec credential
// plugins, in-cluster service accounts), informers for its list+watch
// caches and the attach over WebSocket or SPDY. The binary links them:
// kube is a client-go client like any other, not one of its own.
var clientGoNarrow = []string{
	"k8s.io/client-go/rest",
	"k8s.io/client-go/tools/clientcmd",
	"k8s.io/client-go/tools/cache",
	"k8s.io/client-go/tools/remotecommand",
}

// clientGoAllGroups are packages the binary must not link: the
// all-groups clientset (k8s.io/client-go/kubernetes) and everything
// under it — its scheme, whose init registers every API group of
// Kubernetes, and the generated typed clients, which import that scheme
// — the generated informers, listers and apply configurations of every
// group, and client-go's fakes (client-go/testing, which the generic
// typed clients of gentype link), which bring OpenAPI models and
// structured-merge-diff (protobuf is linked anyway, for the OTLP
// exporters: observability_deps_test.go). Each process of the binary
// (`version`, `status`, each `agent-run` runner) would pay their init
// before main whether it talks to a cluster or not (kube/api.go has the
// figures).
// Tests may use them (kube/kubetest, e2e/kubernetes, kube's tests): test
// imports are not linked.
var clientGoAllGroups = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/listers",
	"k8s.io/client-go/applyconfigurations",
	"k8s.io/client-go/testing",
}

func TestBinaryLinksClientGoButNotTheAllGroupsClientset(t *testing.T) {
	linked, imports := binaryPackages(t)
	importers := map[string][]string{} // all-groups package -> who imports it
	for pkg, imps := range imports {
		if allGroups(pkg) {
			continue
		}
		for _, imp := range imps {
			if allGroups(imp) {
				importers[imp] = append(importers[imp], pkg)
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(importers)) {
		slices.Sort(importers[pkg])
		t.Errorf("the binary links %s (imported by %s): it registers or carries every API group, before main in every process", pkg, strings.Join(importers[pkg], ", "))
	}
	for _, pkg := range clientGoNarrow {
		if !linked[pkg] {
			t.Errorf("the binary does not link %s: the kubernetes backend talks to the cluster through client-go", pkg)
		}
	}
}

// binaryPackages lists the packages the binary links and what each
// imports (`go list -deps` of this command: test imports are not in it).
func binaryPackages(t *testing.T) (linked map[string]bool, imports map[string][]string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the binary's packages:", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, stderrOf(err))
	}
	linked, imports = map[string]bool{}, map[string][]string{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		linked[f[0]] = true
		imports[f[0]] = f[1:]
	}
	return linked, imports
}

func allGroups(pkg string) bool {
	for _, h := range clientGoAllGroups {
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
