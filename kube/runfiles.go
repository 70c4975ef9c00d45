package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// maxRunFiles bounds the run-dir files a run's Secret carries (a Secret
// holds at most 1 MiB, launch.json included).
const maxRunFiles = 768 << 10

// secretKeyRe is what Kubernetes allows as a Secret's key.
var secretKeyRe = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// addRunFiles puts the files the launcher wrote in runDir before the run
// (the prompt, the executor's overlays) into a run's Secret data, for a
// pod with no shared disk: the runner writes them back into its own run
// dir (podCheckout.writeRunFiles). The records and the log are the
// runner's to write, and launch.json travels on its own.
func addRunFiles(data map[string][]byte, runDir string) error {
	entries, err := os.ReadDir(runDir)
	if err != nil {
		return fmt.Errorf("run files: %w", err)
	}
	total := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || runnerFile(name) {
			continue
		}
		if !secretKeyRe.MatchString(name) {
			return fmt.Errorf("run file %q: a name a Secret cannot carry", name)
		}
		b, err := os.ReadFile(filepath.Join(runDir, name))
		if err != nil {
			return fmt.Errorf("run file %s: %w", name, err)
		}
		if total += len(b); total > maxRunFiles {
			return fmt.Errorf("run files in %s: more than %d KiB, which the run's Secret cannot carry", runDir, maxRunFiles>>10)
		}
		data[runFilePrefix+name] = b
	}
	return nil
}

// runnerFile reports the run-dir files a pod's runner writes itself.
func runnerFile(name string) bool {
	switch name {
	case "launch.json", "runtime.json", "status.json", FinalFile:
		return true
	}
	return strings.HasPrefix(name, "agent.log") || strings.HasPrefix(name, ".")
}

// checkCheckout refuses a Payload.Checkout the pod could not work with.
func checkCheckout(p *runtime.Payload) error {
	co := p.Checkout
	switch {
	case co.Origin == "" || strings.HasPrefix(co.Origin, "-"):
		return fmt.Errorf("run %s: checkout: invalid origin URL", p.RunID)
	case co.Base == "" || co.Branch == "":
		return fmt.Errorf("run %s: checkout: base and branch are required", p.RunID)
	case !filepath.IsAbs(co.Dir) || filepath.Clean(co.Dir) != co.Dir:
		return fmt.Errorf("run %s: checkout: dir %q: want a clean absolute path", p.RunID, co.Dir)
	case p.Cwd != co.Dir:
		return fmt.Errorf("run %s: checkout: cwd %q is not the checkout's dir %q", p.RunID, p.Cwd, co.Dir)
	case co.ResultRef == "" || !strings.HasPrefix(co.ResultRef, "refs/"):
		return fmt.Errorf("run %s: checkout: resultRef %q: want a full ref", p.RunID, co.ResultRef)
	case co.SnapshotRef != "" && !strings.HasPrefix(co.SnapshotRef, "refs/"):
		return fmt.Errorf("run %s: checkout: snapshotRef %q: want a full ref", p.RunID, co.SnapshotRef)
	case co.PushRef != "" && !strings.HasPrefix(co.PushRef, "refs/wave/candidates/"):
		return fmt.Errorf("run %s: checkout: pushRef %q: want a ref under refs/wave/candidates/ (a pod pushes no branch)", p.RunID, co.PushRef)
	}
	return nil
}
