// Package jsonfile owns how lane state reaches disk: documents (JSON, or
// raw bytes through WriteFileAtomic) replaced atomically, so readers see
// the old or the new content and never a prefix, and append-only JSON
// Lines logs whose torn or corrupt lines are reported by position instead
// of making the whole log unreadable.
package jsonfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
)

// TmpDir holds writers' temp files inside the target's directory. inotify
// is not recursive, so a watcher of that directory sees one event per
// write (the rename) instead of the temp file's create/write/close too.
const TmpDir = ".tmp"

// Write writes v to path atomically and durably: indented JSON with a
// trailing newline to a temp file, fsync, rename, fsync of the directory.
func Write(path string, v any) error { return write(path, v, true) }

// WriteVolatile is Write without the fsyncs, for data whose loss in a
// crash costs nothing (heartbeats). It is still atomic.
func WriteVolatile(path string, v any) error { return write(path, v, false) }

func write(path string, v any, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writeData(path, append(data, '\n'), durable)
}

// writeData replaces path with data through a temp file under TmpDir.
func writeData(path string, data []byte, durable bool) error {
	tdir := filepath.Join(filepath.Dir(path), TmpDir)
	if err := MkdirAll(tdir); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return replace(path, data, FileMode, durable, tdir, filepath.Base(path)+".*")
}

// WriteFileAtomic replaces path with data as Write does (the whole new
// content or the old, never a prefix, and durable once it returns), with
// permissions perm exactly (the umask does not apply). The temp file is a
// dot file beside path, so a directory that people or tests list (a
// store's files) gains no TmpDir. The directory must exist: a missing one
// is an error naming path, since a writer of raw files (a fetched log, a
// store's record) writes into a place something else made.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil {
		return fmt.Errorf("write %s: directory: %w", path, err)
	} else if !fi.IsDir() {
		return fmt.Errorf("write %s: %s is not a directory", path, dir)
	}
	return replace(path, data, perm, true, dir, "."+filepath.Base(path)+".tmp-*")
}

// replace writes data to a temp file in tdir (named after pattern, as
// os.CreateTemp takes it) and renames it over path; durable adds the
// fsyncs of the file and of path's directory.
func replace(path string, data []byte, perm os.FileMode, durable bool, tdir, pattern string) error {
	f, err := os.CreateTemp(tdir, pattern)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	var merr error
	if perm != 0o600 { // CreateTemp's mode
		merr = f.Chmod(perm)
	}
	_, werr := f.Write(data)
	var serr error
	if durable {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(merr, werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		if d, err := os.Open(filepath.Dir(path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// Append writes v as one JSON line with a single O_APPEND write, so
// concurrent appenders never interleave within a line. If the file does
// not end in a newline (a line torn by a crash or a full disk), the write
// starts with one: the new line never glues onto the fragment, which
// would make both unreadable.
func Append(path string, v any) error {
	line, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode line for %s: %w", path, err)
	}
	if err := MkdirAll(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, FileMode)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	buf := make([]byte, 0, len(line)+2)
	torn, terr := endsTorn(f)
	if torn {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	_, werr := f.Write(buf)
	if err := errors.Join(terr, werr, f.Close()); err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	return nil
}

// endsTorn reports whether a non-empty file's last byte is not a newline.
func endsTorn(f *os.File) (bool, error) {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, err
	}
	return last[0] != '\n', nil
}

// ReadLines decodes every line of a JSON Lines file. A missing file is
// empty. A line that does not decode (a torn last line after a crash, a
// hand edit) is reported in bad as "path:line"; if a whole value follows
// the fragment on that line (a writer that did not start on a fresh line
// glued its line onto a torn one), that value is kept.
func ReadLines[T any](path string) (out []T, bad []string, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	out, bad = ParseLines[T](path, b, 1)
	return out, bad, nil
}

// ParseLines is ReadLines over b, the part of path's content whose first
// line is line number first: what a reader that keeps its place in an
// append-only log (Tail) decodes of the lines added since.
func ParseLines[T any](path string, b []byte, first int) (out []T, bad []string) {
	var lines [][]byte // slices of b
	var nums []int
	for n := first; len(b) > 0; n++ {
		line, rest, _ := bytes.Cut(b, []byte{'\n'})
		if line = bytes.TrimSpace(line); len(line) > 0 {
			lines, nums = append(lines, line), append(nums, n)
		}
		b = rest
	}
	vals := make([]T, len(lines))
	ok := make([]bool, len(lines))
	decodeLines(lines, vals, ok)
	out = make([]T, 0, len(lines))
	for i, line := range lines {
		if ok[i] {
			out = append(out, vals[i])
			continue
		}
		bad = append(bad, fmt.Sprintf("%s:%d", path, nums[i]))
		if g, found := gluedValue[T](line); found {
			out = append(out, g)
		}
	}
	return out, bad
}

// decodeLines decodes lines[i] into vals[i] (ok[i] when it decoded), on
// one goroutine per CPU for a long log: `status` reads the lane's whole
// event log each time, and decoding it is a third of its work.
func decodeLines[T any](lines [][]byte, vals []T, ok []bool) {
	const perWorker = 64
	workers := min(goruntime.GOMAXPROCS(0), (len(lines)+perWorker-1)/perWorker)
	if workers <= 1 {
		for i, line := range lines {
			ok[i] = json.Unmarshal(line, &vals[i]) == nil
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (len(lines) + workers - 1) / workers
	for lo := 0; lo < len(lines); lo += chunk {
		hi := min(lo+chunk, len(lines))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				ok[i] = json.Unmarshal(lines[i], &vals[i]) == nil
			}
		}()
	}
	wg.Wait()
}

// maxGlueProbes bounds the recovery attempts on one corrupt line, so a
// huge line of garbage costs linear time.
const maxGlueProbes = 64

// gluedValue finds the earliest `{` after the start of a corrupt line
// from which the rest of the line decodes to a whole value: one carrying
// every key a writer always writes (the non-omitempty fields of T). The
// check matters because a line torn just before its closing brace ends in
// a nested object, which must not pass for a record.
func gluedValue[T any](line []byte) (T, bool) {
	var zero T
	always := alwaysKeys[T]()
	off := 1
	for probes := 0; probes < maxGlueProbes; probes++ {
		i := bytes.IndexByte(line[off:], '{')
		if i < 0 {
			break
		}
		off += i
		var keys map[string]json.RawMessage
		var v T
		if json.Unmarshal(line[off:], &keys) == nil && hasAll(keys, always) && json.Unmarshal(line[off:], &v) == nil {
			return v, true
		}
		off++
	}
	return zero, false
}

// alwaysKeys lists the keys json.Marshal writes for a zero T.
func alwaysKeys[T any]() []string {
	var zero T
	b, err := json.Marshal(zero)
	if err != nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func hasAll(m map[string]json.RawMessage, keys []string) bool {
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}
