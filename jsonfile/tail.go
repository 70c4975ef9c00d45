package jsonfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Tail reads a JSON Lines log as it grows, so a reader that looks often
// (a budget check every second) decodes each line once instead of the
// whole log each time. It consumes complete lines only: a line being
// appended is read once its newline is there.
type Tail[T any] struct {
	path string
	fi   os.FileInfo // the file read last, to see it replaced
	off  int64       // bytes consumed: complete lines only
	line int         // lines consumed, for the "path:line" of a bad one
	read bool        // Read was called
}

// NewTail returns a Tail of the log at path, which need not exist yet.
func NewTail[T any](path string) *Tail[T] { return &Tail[T]{path: path} }

// Read returns the values of the complete lines appended since the last
// Read, bad lines reported as ReadLines does. reset is true on the first
// Read and whenever the log was replaced (renamed over, rotated away,
// removed) or truncated since: the values are then the whole log from
// its start, and what the caller kept from earlier Reads is stale.
func (t *Tail[T]) Read() (vals []T, bad []string, reset bool, err error) {
	first := !t.read
	t.read = true
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		reset = first || t.fi != nil
		t.fi, t.off, t.line = nil, 0, 0
		return nil, nil, reset, nil
	}
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, false, fmt.Errorf("read %s: %w", t.path, err)
	}
	off, line := t.off, t.line
	if first || t.fi == nil || !os.SameFile(fi, t.fi) || fi.Size() < off || !t.endsLine(f) {
		off, line, reset = 0, 0, true
	}
	b := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, reset, fmt.Errorf("read %s: %w", t.path, err)
	}
	b = b[:n]
	if end := bytes.LastIndexByte(b, '\n'); end >= 0 {
		b = b[:end+1]
		vals, bad = ParseLines[T](t.path, b, line+1)
	} else {
		b = nil
	}
	t.fi, t.off, t.line = fi, off+int64(len(b)), line+bytes.Count(b, []byte{'\n'})
	return vals, bad, reset, nil
}

// endsLine reports whether the byte before the offset is still the
// newline that ended the last line consumed: a log truncated and written
// again past the offset between two Reads keeps its file and outgrows
// the offset, but not that newline.
func (t *Tail[T]) endsLine(f *os.File) bool {
	if t.off == 0 {
		return true
	}
	var last [1]byte
	_, err := f.ReadAt(last[:], t.off-1)
	return err == nil && last[0] == '\n'
}
