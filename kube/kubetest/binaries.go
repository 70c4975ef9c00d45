package kubetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// apiserverVersion is the kube-apiserver scripts/kube-test-env.sh builds.
const apiserverVersion = "v1.34.4"

// fixCommand is what a developer runs to get the binaries.
const fixCommand = "bash scripts/kube-test-env.sh"

// errMissing marks a start that failed because a binary is not installed,
// which skips rather than fails unless the environment requires the tests.
var errMissing = errors.New("test binaries missing")

// binaries are the two programs a cluster runs.
type binaries struct{ apiserver, etcd string }

// findBinaries looks for kube-apiserver ($KUBE_APISERVER, else the cache
// path scripts/kube-test-env.sh builds into) and etcd ($ETCD, else PATH).
func findBinaries() (binaries, error) {
	api := os.Getenv("KUBE_APISERVER")
	if api == "" {
		api = filepath.Join(cacheDir(), "kube-apiserver-"+apiserverVersion)
	}
	if err := executable(api); err != nil {
		return binaries{}, fmt.Errorf("%w: kube-apiserver: %v; run `%s` from the repository root (or set $KUBE_APISERVER)", errMissing, err, fixCommand)
	}
	etcd := os.Getenv("ETCD")
	if etcd == "" {
		p, err := exec.LookPath("etcd")
		if err != nil {
			return binaries{}, fmt.Errorf("%w: etcd is not on PATH; run `%s` from the repository root (or set $ETCD)", errMissing, fixCommand)
		}
		etcd = p
	}
	if err := executable(etcd); err != nil {
		return binaries{}, fmt.Errorf("%w: etcd: %v; run `%s` from the repository root (or set $ETCD)", errMissing, err, fixCommand)
	}
	return binaries{apiserver: api, etcd: etcd}, nil
}

// cacheDir mirrors the script:
// ${KUBETEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wave-orchestrator/kube}.
func cacheDir() string {
	if d := os.Getenv("KUBETEST_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "wave-orchestrator", "kube")
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// controllerManager is the kube-controller-manager to run instead of the
// Node's stand-in Job controller and garbage collector, or "" for none:
// $KUBETEST_CONTROLLER_MANAGER is its path, or 1 for the one
// `scripts/kube-test-env.sh --controller-manager` builds into the cache.
func controllerManager() (string, error) {
	v := os.Getenv("KUBETEST_CONTROLLER_MANAGER")
	switch v {
	case "", "0":
		return "", nil
	case "1":
		v = filepath.Join(cacheDir(), "kube-controller-manager-"+apiserverVersion)
	}
	if err := executable(v); err != nil {
		return "", fmt.Errorf("%w: kube-controller-manager ($KUBETEST_CONTROLLER_MANAGER): %v; run `%s --controller-manager`", errMissing, err, fixCommand)
	}
	return v, nil
}

// required reports whether missing binaries fail the tests instead of
// skipping them: in CI, or when a developer asks with KUBETEST_REQUIRED.
func required() bool { return os.Getenv("CI") != "" || os.Getenv("KUBETEST_REQUIRED") != "" }

// startFailed ends t for a cluster that could not start: a skip when only
// the binaries are missing on a developer's machine, a failure otherwise.
func startFailed(t testing.TB, err error) {
	t.Helper()
	if errors.Is(err, errMissing) && !required() {
		t.Skip(err)
	}
	t.Fatal(err)
}
