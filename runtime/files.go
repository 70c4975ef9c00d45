package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"

	"golang.org/x/sys/unix"
)

// ErrUnreadable marks a record file that exists but does not parse
// (truncated, corrupt). Errors wrapping it name the path.
var ErrUnreadable = errors.New("unreadable")

// WriteJSON writes v to path atomically and durably (see jsonfile.Write).
func WriteJSON(path string, v any) error { return jsonfile.Write(path, v) }

// tmpDir is where writers put temp files inside a run directory.
const tmpDir = jsonfile.TmpDir

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
	envFile     = "env"
)

// FinalFile is a pod's runner's final report (its terminal record and
// status), in the run directory and in a checkout run's result commit:
// written by the runner, read by the kubernetes mirror and, from the
// result commit, by the backlog supervisor.
const FinalFile = "runner-final.json"

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
