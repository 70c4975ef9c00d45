package lanes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gofrs/flock"
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

// Deleting the lock file under a live launcher must not let a second
// launcher in: the flock stays on the unlinked inode, and the directory
// lock still excludes.
func TestDeletedLockFileStillExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	lk, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if !Held(path) {
		t.Fatal("Held = false after the lock file was deleted under its holder")
	}
	_, err = AcquireLock(path)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second acquire after delete: %v; want ErrLocked", err)
	}
	lk.Release()
	lk2, err := AcquireLock(path)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	lk2.Release()
}

// A lock file replaced between open and flock leaves the acquirer holding
// a lock on an inode nobody else will look at; it must retry on the file
// now at the path, and find that one held.
func TestLockOnReplacedFileIsRetriedOnTheNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	other := flock.New(path)
	replaced := false
	_, err := acquire(path, func() {
		if replaced {
			return
		}
		replaced = true
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if ok, err := other.TryLock(); !ok || err != nil {
			t.Fatalf("lock the new file: %v %v", ok, err)
		}
	})
	defer other.Unlock()
	if !replaced || !errors.Is(err, ErrLocked) {
		t.Fatalf("acquire over a replaced file: %v; want ErrLocked from the new file's holder", err)
	}
}

// A held lock whose body is garbage says so; it does not name pid 0 and
// the zero time.
func TestHeldLockWithGarbageBodyIsReportedUnreadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	lk, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	if err := os.WriteFile(path, []byte("\x00garbage{"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = AcquireLock(path)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "unreadable lock body") ||
		strings.Contains(err.Error(), "pid 0") || strings.Contains(err.Error(), "0001-01-01") {
		t.Fatalf("error %q", err)
	}
}
