package telemetry

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// tailer reads a log's complete lines as they are appended. The lane's
// log is rotated to <path>.1 when a wave run starts past its size cap
// (state.Append): the rest of the old file is read from there before the
// new one from its start.
type tailer struct {
	path    string
	rotates bool
	fi      os.FileInfo
	off     int64
}

// readAll reads the whole log, the rotated generation first.
func (t *tailer) readAll() ([][]byte, error) {
	var out [][]byte
	if t.rotates {
		old, _, err := linesFrom(t.path+".1", 0)
		if err != nil {
			return nil, err
		}
		out = old
	}
	cur, err := t.readNew()
	if t.fi == nil {
		// No log yet: the one created next is followed from its start.
		t.fi, _ = os.Stat(t.path)
	}
	return append(out, cur...), err
}

// readNew returns the complete lines appended since the last read.
func (t *tailer) readNew() ([][]byte, error) {
	fi, err := os.Stat(t.path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("telemetry: %w", err)
	}
	var out [][]byte
	if t.fi != nil && !os.SameFile(fi, t.fi) {
		if old, err := os.Stat(t.path + ".1"); err == nil && os.SameFile(old, t.fi) {
			rest, _, err := linesFrom(t.path+".1", t.off)
			if err != nil {
				return nil, err
			}
			out = rest
		}
		t.off = 0
	}
	t.fi = fi
	lines, n, err := linesFrom(t.path, t.off)
	t.off += n
	return append(out, lines...), err
}

// linesFrom reads the complete lines of path from off; n is the bytes
// they span (a torn last line waits for the next read).
func linesFrom(path string, off int64) (lines [][]byte, n int64, err error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("telemetry: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("telemetry: %s: %w", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, 0, fmt.Errorf("telemetry: %s: %w", path, err)
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
