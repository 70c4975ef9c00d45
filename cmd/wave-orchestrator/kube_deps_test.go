package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// heavyClientGo are packages the binary must not link: nothing of
// k8s.io or sigs.k8s.io at all. client-go's REST client, kubeconfig
// loader, informers and remotecommand, and after them k8s.io/api's and
// apimachinery's types (scheme registration, validation regexps,
// json-iterator), initialise dozens of packages before main in every
// process of the binary — `version`, `status --json` and each
// `agent-run` runner included — whether it touches a cluster or not.
// Package kube talks to the API server through its own REST client,
// kubeconfig reader, list+watch cache, WebSocket attach and API types
// instead (kube/api.go). Tests may still use client-go and k8s.io/api
// (kube/kubetest, e2e/kubernetes, kube's tests): test imports are not
// linked. The rest are what those brought: SPDY, protobuf, OpenAPI
// models, OAuth2, json-iterator and its reflection, CBOR, inf.v0 and
// YAML v2.
var heavyClientGo = []string{
	"k8s.io",
	"sigs.k8s.io",
	"github.com/moby/spdystream",
	"google.golang.org/protobuf",
	"github.com/google/gnostic-models",
	"golang.org/x/oauth2",
	"github.com/json-iterator/go",
	"github.com/modern-go",
	"github.com/fxamacker/cbor",
	"github.com/x448/float16",
	"gopkg.in/inf.v0",
	"go.yaml.in/yaml/v2",
}

// linkedVia are heavy packages the binary may link through one module
// only: the MCP SDK's auth helpers import golang.org/x/oauth2 for its
// token types, which run no package initialisation at all (measured with
// GODEBUG=inittrace=1); client-go bringing it back would still fail.
var linkedVia = map[string]string{"golang.org/x/oauth2": "github.com/modelcontextprotocol/go-sdk/"}

func TestBinaryLinksNoClientGo(t *testing.T) {
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
			if via, ok := linkedVia[imp]; ok && strings.HasPrefix(f[0], via) {
				continue
			}
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
