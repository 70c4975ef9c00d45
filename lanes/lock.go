package lanes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// ErrLocked is returned (wrapped in *LockedError) when another live
// process holds the lane lock.
var ErrLocked = errors.New("lane lock held")

// LockedError names the holder of a lane lock.
type LockedError struct {
	Path   string
	Holder LockInfo
}

func (e *LockedError) Error() string {
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

// Lock is a held lane lock. The kernel releases the flock when the holder
// dies, so a dead launcher's lock needs no cleanup.
type Lock struct {
	fl   *flock.Flock
	path string
}

// lockPatience is how long AcquireLock keeps trying: Held (status,
// dashboard, doctor, stop) takes the lock for an instant to probe it, and
// a launcher starting at that instant must not be turned away.
const lockPatience = 250 * time.Millisecond

// AcquireLock takes the lane lock for a launcher, trying for up to
// lockPatience, and records the holder in the file. If another process
// holds it the error is a *LockedError.
func AcquireLock(path string) (*Lock, error) { return acquire(path, false) }

// AcquireLockQuiet takes the lane lock without recording a holder, for a
// short maintenance step (stop): the file keeps naming the last launcher,
// so status never reports the maintenance command as one.
func AcquireLockQuiet(path string) (*Lock, error) { return acquire(path, true) }

func acquire(path string, quiet bool) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lane lock %s: %w", path, err)
	}
	fl := flock.New(path)
	ctx, cancel := context.WithTimeout(context.Background(), lockPatience)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 10*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lane lock %s: %w", path, err)
	}
	if !ok {
		info, _ := ReadLockInfo(path)
		return nil, &LockedError{Path: path, Holder: info}
	}
	if quiet {
		return &Lock{fl: fl, path: path}, nil
	}
	host, _ := os.Hostname()
	info := LockInfo{Pid: os.Getpid(), StartedAt: time.Now().UTC(), Host: host, Argv: os.Args}
	body, _ := json.Marshal(info)
	// Write through the locked descriptor's path; the file is ours now.
	if err := os.WriteFile(path, append(body, '\n'), 0o644); err != nil {
		fl.Unlock()
		return nil, fmt.Errorf("lane lock %s: write holder: %w", path, err)
	}
	return &Lock{fl: fl, path: path}, nil
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
func Held(path string) bool {
	fl := flock.New(path)
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
	if l == nil || l.fl == nil {
		return nil
	}
	err := l.fl.Unlock()
	// Unlocking writes nothing; touching the file lets watchers (the
	// dashboard) see that the launcher is gone.
	now := time.Now()
	_ = os.Chtimes(l.path, now, now)
	return err
}
