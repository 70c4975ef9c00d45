package kubetest

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// Shared is one cluster for a whole test binary, started by the first
// test that asks for it (so `go test -run` of other tests pays nothing)
// and stopped by TestMain:
//
//	var cluster kubetest.Shared
//
//	func TestMain(m *testing.M) { os.Exit(cluster.Run(m)) }
//
//	func TestX(t *testing.T) {
//		c := cluster.Get(t)
//		ns := c.Namespace(t, "x")
//		...
//	}
//
// Tests isolate themselves with per-test namespaces. The zero value is
// ready to use; set Options before the first Get.
type Shared struct {
	Options []Option

	once sync.Once
	c    *Cluster
	err  error
}

// Get returns the shared cluster, starting it on first use. When it
// cannot start, every test that asks skips (binaries missing on a
// developer's machine) or fails with the same error.
func (s *Shared) Get(t testing.TB) *Cluster {
	t.Helper()
	s.once.Do(func() { s.c, s.err = start(context.Background(), s.Options) })
	if s.err != nil {
		startFailed(t, s.err)
	}
	return s.c
}

// Run is a TestMain body: it runs the tests, stops the cluster if one was
// started and returns the exit code. A TestMain that has its own m.Run
// wrapper calls Stop after it instead.
func (s *Shared) Run(m *testing.M) int {
	code := m.Run()
	s.Stop()
	return code
}

// Stop kills the shared cluster if it was started.
func (s *Shared) Stop() {
	s.once.Do(func() { s.err = errStopped })
	if s.c != nil {
		s.c.stop()
	}
}

var errStopped = errors.New("kubetest: the shared cluster was stopped before it was used")
