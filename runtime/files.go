package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrUnreadable marks a record file that exists but does not parse
// (truncated, corrupt). Errors wrapping it name the path.
var ErrUnreadable = errors.New("unreadable")

// WriteJSON writes v to path atomically and durably: a temp file, fsync,
// rename, then fsync of the directory. Readers see the old or the new
// content, never a prefix.
func WriteJSON(path string, v any) error { return writeJSON(path, v, true) }

// tmpDir holds writers' temp files inside a run directory. inotify is not
// recursive, so a watcher of the run directory sees one event per write
// (the rename) instead of create/write/close events of the temp file too.
const tmpDir = ".tmp"

// writeJSON is WriteJSON; without durable it skips the fsyncs, for
// heartbeats, whose loss in a crash costs nothing.
func writeJSON(path string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	tdir := filepath.Join(dir, tmpDir)
	if err := os.MkdirAll(tdir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(tdir, filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	var serr error
	if durable {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// readJSON decodes path into v. A missing file returns an error satisfying
// errors.Is(err, fs.ErrNotExist); a corrupt one wraps ErrUnreadable.
func readJSON(path string, v any) error {
	data, err := readSmall(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w: %w", path, ErrUnreadable, err)
	}
	return nil
}

// ReadRecord reads a runtime.json.
func ReadRecord(path string) (*Record, error) {
	var r Record
	if err := readJSON(path, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReadStatus reads a status.json.
func ReadStatus(path string) (*Status, error) {
	var s Status
	if err := readJSON(path, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// ReadPayload reads a launch.json.
func ReadPayload(path string) (*Payload, error) {
	var p Payload
	if err := readJSON(path, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Paths of a run directory's files.
const (
	launchFile  = "launch.json"
	runtimeFile = "runtime.json"
	statusFile  = "status.json"
	logFile     = "agent.log"
)

// FillPaths sets the payload's file paths that are empty from RunDir.
func (p *Payload) FillPaths() {
	set := func(dst *string, name string) {
		if *dst == "" {
			*dst = filepath.Join(p.RunDir, name)
		}
	}
	set(&p.LogPath, logFile)
	set(&p.StatusPath, statusFile)
	set(&p.RuntimePath, runtimeFile)
}

// readSmall reads a small file with three system calls (open, read,
// close) where os.ReadFile makes six: the watcher and the launcher read
// every run's record and /proc entry each second.
func readSmall(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
