package lanes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// ErrLocked is returned (wrapped in *LockedError) when another live
// process holds the lane lock.
var ErrLocked = errors.New("lane lock held")

// LockedError names the holder of a lane lock. BodyErr is set when the
// lock is held but its body does not say by whom (garbage, a deleted
// file): Holder is then empty and must not be shown as pid 0.
type LockedError struct {
	Path    string
	Holder  LockInfo
	BodyErr error
}

func (e *LockedError) Error() string {
	if e.BodyErr != nil {
		return fmt.Sprintf("lane lock %s is held by another process (unreadable lock body: %v)", e.Path, e.BodyErr)
	}
	return fmt.Sprintf("lane lock %s is held by pid %d (started %s, %v)",
		e.Path, e.Holder.Pid, e.Holder.StartedAt.Format(time.RFC3339), e.Holder.Argv)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// LockInfo is the body of the lock file.
type LockInfo struct {
	Pid       int       `json:"pid"`
	StartedAt time.Time `json:"startedAt"`
	Host      string    `json:"host"`
	Argv      []string  `json:"argv"`
}

// Lock is a held lane lock: a flock on the lock file and one on the
// lane's state directory. The kernel releases both when the holder dies,
// so a dead launcher's lock needs no cleanup. The directory lock is the
// anchor: deleting the lock file (the flock stays on the unlinked inode)
// cannot let a second launcher in, because a directory holding the lane's
// state cannot be removed under a running launcher by a plain rm.
type Lock struct {
	dir  *flock.Flock
	file *flock.Flock
	path string
}

// lockPatience is how long AcquireLock keeps trying: Held (status,
// dashboard, doctor, stop) takes the lock for an instant to probe it, and
// a launcher starting at that instant must not be turned away.
const lockPatience = 250 * time.Millisecond

// errBusy: another process holds the lock. errReplaced: the file locked
// is no longer the one at the path.
var (
	errBusy     = errors.New("busy")
	errReplaced = errors.New("lock file replaced while locking")
)

// AcquireLock takes the lane lock for a launcher, trying for up to
// lockPatience, and records the holder in the file. If another process
// holds it the error is a *LockedError.
func AcquireLock(path string) (*Lock, error) { return acquire(path, false, nil) }

// AcquireLockQuiet takes the lane lock without recording a holder, for a
// short maintenance step (stop): the file keeps naming the last launcher,
// so status never reports the maintenance command as one.
func AcquireLockQuiet(path string) (*Lock, error) { return acquire(path, true, nil) }

// acquire takes the lock, writing the holder body unless quiet. afterLock
// runs between taking the flocks and checking the file's identity (tests
// replace the file there).
func acquire(path string, quiet bool, afterLock func()) (*Lock, error) {
	if err := jsonfile.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("lane lock %s: %w", path, err)
	}
	deadline := time.Now().Add(lockPatience)
	for {
		lk, err := tryAcquire(path, afterLock)
		switch {
		case err == nil && quiet:
			return lk, nil
		case err == nil:
			return lk, lk.writeBody()
		case errors.Is(err, errReplaced):
			continue // lock the file now at the path
		case !errors.Is(err, errBusy):
			return nil, fmt.Errorf("lane lock %s: %w", path, err)
		case time.Now().After(deadline):
			info, berr := ReadLockInfo(path)
			return nil, &LockedError{Path: path, Holder: info, BodyErr: berr}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tryAcquire(path string, afterLock func()) (*Lock, error) {
	dir := flock.New(filepath.Dir(path), flock.SetFlag(os.O_RDONLY))
	ok, err := dir.TryLock()
	if err != nil || !ok {
		return nil, errors.Join(errBusy, err)
	}
	file := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY), flock.SetPermissions(jsonfile.FileMode))
	ok, err = file.TryLock()
	if err != nil || !ok {
		dir.Unlock()
		if err != nil {
			return nil, err
		}
		return nil, errBusy
	}
	if afterLock != nil {
		afterLock()
	}
	// flock binds to the inode opened: if the path was unlinked or
	// replaced between open and lock, this lock guards nothing.
	held, herr := file.Stat()
	now, nerr := os.Stat(path)
	if herr != nil || nerr != nil || !os.SameFile(held, now) {
		file.Unlock()
		dir.Unlock()
		return nil, errReplaced
	}
	return &Lock{dir: dir, file: file, path: path}, nil
}

func (l *Lock) writeBody() error {
	host, _ := os.Hostname()
	info := LockInfo{Pid: os.Getpid(), StartedAt: time.Now().UTC(), Host: host, Argv: os.Args}
	body, _ := json.Marshal(info)
	if err := jsonfile.WriteFile(l.path, append(body, '\n')); err != nil {
		l.Release()
		return fmt.Errorf("lane lock %s: write holder: %w", l.path, err)
	}
	return nil
}

// ReadLockInfo reads the holder recorded in a lock file.
func ReadLockInfo(path string) (LockInfo, error) {
	var info LockInfo
	b, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		// Created by a quiet acquire: no launcher ever held it.
		return info, fmt.Errorf("lane lock %s: no holder recorded: %w", path, fs.ErrNotExist)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("lane lock %s: %w", path, err)
	}
	return info, nil
}

// Held reports whether some process holds the lock at path right now.
// It probes the directory lock, which a deleted lock file does not free.
func Held(path string) bool {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	fl := flock.New(dir, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		fl.Unlock()
		return false
	}
	return true
}

// Release frees the lock. The file stays (its body names the last holder).
func (l *Lock) Release() error {
	if l == nil || l.file == nil {
		return nil
	}
	err := errors.Join(l.file.Unlock(), l.dir.Unlock())
	// Unlocking writes nothing; touching the file lets watchers (the
	// dashboard) see that the launcher is gone.
	now := time.Now()
	_ = os.Chtimes(l.path, now, now)
	return err
}
