package lanes

import (
	"errors"
	"io/fs"
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

// stop's quiet lock still excludes a launcher (through the directory
// lock), and a launcher's lock excludes stop.
func TestQuietLockExcludesALauncher(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	q, err := AcquireLockQuiet(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := AcquireLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("launcher under a quiet lock: %v; want ErrLocked", err)
	}
	q.Release()
	lk, err := AcquireLock(path)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Release()
	if _, err := AcquireLockQuiet(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("quiet lock under a launcher: %v; want ErrLocked", err)
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
	_, err := acquire(path, false, func() {
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
