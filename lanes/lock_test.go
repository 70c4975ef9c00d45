package lanes

import (
	"errors"
	"io/fs"
	"os"
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

func TestQuietLockKeepsTheLastLauncher(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lock")
	// Never held by a launcher: a quiet acquire records nobody.
	l, err := AcquireLockQuiet(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if _, err := ReadLockInfo(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after a quiet lock: %v, want no holder", err)
	}
	// After a launcher, a quiet acquire leaves it named.
	l, err = AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	l, err = AcquireLockQuiet(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if info, err := ReadLockInfo(path); err != nil || info.Pid != os.Getpid() {
		t.Fatalf("holder %+v %v, want the launcher (this pid)", info, err)
	}
}
