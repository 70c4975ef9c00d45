package lanes

import (
	"path/filepath"
	"testing"
)

// status, dashboard, doctor and stop probe the lock with Held, which takes
// it for an instant: a launcher starting at that instant must still get it.
func TestAcquireWhileProbed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				Held(path)
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := range 200 {
		lk, err := AcquireLock(path)
		if err != nil {
			t.Fatalf("acquire %d while probed: %v", i, err)
		}
		lk.Release()
	}
}
