// Package logtail reads a line log as it grows, across its rotation: a
// lane's log is moved to <path>.1 when it grows past its cap
// (state.Append), and the rest of the old file is read from there before
// the new one from its start. The notify and telemetry followers use it;
// it owns no goroutine and does no waiting (its callers watch the file).
package logtail

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Tail is one log being read. Rotates says the log may be rotated (then
// ReadAll starts from the rotated generation).
type Tail struct {
	Path    string
	Rotates bool
	fi      os.FileInfo
	off     int64
}

// ReadAll reads the whole log, the rotated generation first.
func (t *Tail) ReadAll() ([][]byte, error) {
	var out [][]byte
	if t.Rotates {
		old, _, err := linesFrom(t.Path+".1", 0)
		if err != nil {
			return nil, err
		}
		out = old
	}
	cur, err := t.ReadNew()
	return append(out, cur...), err
}

// Pin makes a log that did not exist at ReadAll (a lane's first launch)
// the one followed, from its start: were it rotated before the next read,
// that read would take the new file for the first and skip the lines
// moved to <path>.1.
func (t *Tail) Pin() {
	if t.fi == nil {
		t.fi, _ = os.Stat(t.Path)
	}
}

// ReadNew returns the complete lines appended since the last read.
func (t *Tail) ReadNew() ([][]byte, error) {
	fi, err := os.Stat(t.Path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	if t.fi != nil && !os.SameFile(fi, t.fi) {
		if old, err := os.Stat(t.Path + ".1"); err == nil && os.SameFile(old, t.fi) {
			rest, _, err := linesFrom(t.Path+".1", t.off)
			if err != nil {
				return nil, err
			}
			out = rest
		}
		t.off = 0
	}
	t.fi = fi
	lines, n, err := linesFrom(t.Path, t.off)
	t.off += n
	return append(out, lines...), err
}

// linesFrom reads the complete, non-blank lines of path from off; n is
// the bytes they span (a torn last line waits for the next read).
func linesFrom(path string, off int64) (lines [][]byte, n int64, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return nil, 0, nil
	}
	for _, l := range bytes.Split(b[:end], []byte{'\n'}) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines = append(lines, l)
		}
	}
	return lines, int64(end + 1), nil
}
