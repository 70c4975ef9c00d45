package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// StatusCache is one read of a lane through its status cache (Cache):
// ReadEvents folds the event log from where the cache left it, Observer
// reuses the facts of finished runs whose files did not change, and Save
// writes what this read learnt back. Any problem with the cache file
// itself is logged at debug level and the read goes on without it.
// Concurrent reads and a live launcher are safe: the file is replaced
// atomically, and a reader that finds it describing other files than it
// sees reads those files.
type StatusCache struct {
	path string
	log  *slog.Logger
	old  *Cache // as loaded; nil when absent or unusable

	next    Cache // what Save writes
	changed bool

	mu sync.Mutex // guards next and changed during Observer's parallel calls
}

// OpenStatusCache loads the cache at path (lanes.Layout.StatusCachePath)
// if this build wrote it.
func OpenStatusCache(path string, log *slog.Logger) *StatusCache {
	program := ProgramID()
	c := &StatusCache{path: path, log: log, next: Cache{Version: CacheVersion, Program: program, Runs: map[string]CachedRun{}}}
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Debug("status cache unreadable; rebuilding", "path", path, "err", err)
		}
		return c
	}
	old, err := decodeCache(b, c.base())
	if err != nil {
		log.Debug("status cache unusable; rebuilding", "path", path, "err", err)
		return c
	}
	if !old.Usable(program) {
		log.Debug("status cache of another build; rebuilding", "path", path, "program", old.Program)
		return c
	}
	c.old = old
	return c
}

// ProgramID names the running build: its executable's path, size, mtime
// and inode. When the executable cannot be found, an id no cache has.
func ProgramID() string {
	exe, err := os.Executable()
	if err == nil {
		var fi fs.FileInfo
		if fi, err = os.Stat(exe); err == nil {
			b, _ := fileKey(exe, fi).MarshalText()
			return string(b)
		}
	}
	return fmt.Sprintf("unknown build, pid %d at %d", os.Getpid(), time.Now().UnixNano())
}

// ReadEvents is state.ReadEvents and FoldEvents of the log at path, from
// the cache's place in it when the log only grew since.
func (c *StatusCache) ReadEvents(path string) (*Fold, []string, error) {
	rot, rotKey, err := openKeyed(path + ".1")
	if err != nil {
		return nil, nil, err
	}
	defer closeFile(rot)
	cur, curKey, err := openKeyed(path)
	if err != nil {
		return nil, nil, err
	}
	defer closeFile(cur)
	f, bad, lines, place, start, buf, err := c.resume(rotKey, curKey, cur)
	if err != nil {
		return nil, nil, err
	}
	if f == nil { // from the start
		c.changed = true
		f, lines, place, start = &Fold{}, 0, 0, 0
		b, err := readFrom(rot, 0)
		if err != nil {
			return nil, nil, err
		}
		bad = f.applyLines(path+".1", b, 1)
		if buf, err = readFrom(cur, 0); err != nil {
			return nil, nil, err
		}
	}
	// buf is the current log from byte start; the fold has read it up to
	// byte place.
	complete, partial := CompleteLines(buf[place-start:])
	bad = append(bad, f.applyLines(path, complete, lines+1)...)
	lines += bytes.Count(complete, []byte{'\n'})
	end := place + int64(len(complete))
	if end != place {
		c.changed = true
	}
	curKey.Size = end
	c.next.Log = LogPlace{Rotated: rotKey, Current: curKey, Lines: lines,
		TailSum: TailSum(buf[WindowStart(end)-start : end-start])}
	c.next.Fold, c.next.Bad = f, bad
	if len(partial) == 0 {
		return f, bad, nil
	}
	// A line still being written: read it as ReadEvents would, but keep
	// the cache at the last whole line.
	c.next.Fold, c.next.Bad = cloneFold(f), slices.Clone(bad)
	return f, append(bad, f.applyLines(path, partial, lines+1)...), nil
}

// applyLines folds the JSON lines of b, the first being line first of
// path, and names the unreadable ones.
func (f *Fold) applyLines(path string, b []byte, first int) (bad []string) {
	evs, bad := jsonfile.ParseLines[Event](path, b, first)
	for _, ev := range evs {
		f.Apply(ev)
	}
	return bad
}

// resume is the cache's fold of the log and the current log read from the
// start of the tail window before its place, when the log only grew since
// the cache was written; a nil fold when it must be read from the start.
func (c *StatusCache) resume(rotKey, curKey FileKey, cur *os.File) (f *Fold, bad []string, lines int, place, start int64, buf []byte, err error) {
	if c.old == nil {
		return
	}
	if !c.old.Log.Continues(rotKey, curKey) {
		c.log.Debug("status cache: event log replaced or rotated; refolding", "path", curKey.Name)
		return
	}
	place = c.old.Log.Current.Size
	start = WindowStart(place)
	if buf, err = readFrom(cur, start); err != nil {
		return nil, nil, 0, 0, 0, nil, err
	}
	if int64(len(buf)) < place-start || !c.old.Log.TailMatches(buf[:place-start]) {
		c.log.Debug("status cache: event log rewritten; refolding", "path", curKey.Name)
		return nil, nil, 0, 0, 0, nil, nil
	}
	return c.old.Fold, c.old.Bad, c.old.Log.Lines, place, start, buf, nil
}

// FinalObserver observes one run, as Observer does, and names the files
// of its directory its facts came from when they are final (its runtime
// record terminal): nil when they may still change.
type FinalObserver func(runDir string) (RunFacts, []string)

// Reuse gives the cached facts of the finished run in dir while its files
// are unchanged (a stat of each), ok false when it must be observed
// (Observer). It is cheap enough that LoadFold asks it for every run on
// one goroutine before fanning the others out.
func (c *StatusCache) Reuse(dir string) (RunFacts, bool) {
	if c.old == nil {
		return RunFacts{}, false
	}
	e, ok := c.old.Runs[dir]
	if !ok || !e.Fresh(statKeys(dir, e.FileNames())) {
		return RunFacts{}, false
	}
	c.mu.Lock()
	c.next.Runs[dir] = e
	c.mu.Unlock()
	f := e.Facts
	f.RunDir = dir
	return f, true
}

// Observer is obs for the runs Reuse cannot answer for, keeping the facts
// of those that turn out finished. candidates names the files of a run
// directory its facts may come from; they are looked at before obs reads
// them, so a file that changes during the read has another key and is
// read again next time.
func (c *StatusCache) Observer(candidates []string, obs FinalObserver) Observer {
	return func(dir string) RunFacts {
		before := statKeys(dir, candidates)
		f, files := obs(dir)
		if files != nil {
			e := CachedRun{Facts: f}
			for _, k := range before {
				if slices.Contains(files, k.Name) {
					e.Files = append(e.Files, k)
				}
			}
			c.mu.Lock()
			c.next.Runs[dir], c.changed = e, true
			c.mu.Unlock()
		}
		return f
	}
}

// Save writes the cache when this read learnt something new (the log
// grew, a run finished, a run left the log). A failed write costs only
// the next read's time: it is logged, never returned.
func (c *StatusCache) Save() {
	if c.next.Fold == nil || c.next.Log.Current.Missing {
		return // no log read, or none to read: nothing to keep, no directory made
	}
	if !c.changed && c.old != nil {
		for dir := range c.old.Runs {
			if _, ok := c.next.Runs[dir]; !ok {
				c.changed = true // a run left the log or is no longer final
				break
			}
		}
	}
	if !c.changed {
		return
	}
	if err := jsonfile.WriteLinesVolatile(c.path, encodeCache(&c.next, c.base())); err != nil {
		c.log.Debug("status cache not written", "path", c.path, "err", err)
	}
}

// base is the directory whose paths the cache file shortens: the lane's
// state directory (the cache sits in its cache/).
func (c *StatusCache) base() string {
	return filepath.Dir(filepath.Dir(c.path)) + string(filepath.Separator)
}

// keyOf is the key of an open file (f nil: a missing one).
func keyOf(path string, f *os.File) (FileKey, error) {
	if f == nil {
		return FileKey{Name: path, Missing: true}, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return FileKey{}, err
	}
	return fileKey(path, fi), nil
}

func fileKey(name string, fi fs.FileInfo) FileKey {
	k := FileKey{Name: name, Size: fi.Size(), ModNs: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.Inode = st.Ino
	}
	return k
}

// statKeys are the keys of the files names of dir as they are now.
func statKeys(dir string, names []string) []FileKey {
	out := make([]FileKey, len(names))
	for i, n := range names {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil {
			out[i] = FileKey{Name: n, Missing: true}
			continue
		}
		out[i] = fileKey(n, fi)
	}
	return out
}

// openKeyed opens path and gives its key; a missing file is a nil file.
func openKeyed(path string) (*os.File, FileKey, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, FileKey{Name: path, Missing: true}, nil
	}
	if err != nil {
		return nil, FileKey{}, err
	}
	k, err := keyOf(path, f)
	if err != nil {
		f.Close()
		return nil, FileKey{}, err
	}
	return f, k, nil
}

func closeFile(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// readFrom reads f from offset to its end (nothing for a nil f).
func readFrom(f *os.File, offset int64) ([]byte, error) {
	if f == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<62))
	return b, err
}

// cloneFold is a deep copy of f, through the encoding the cache uses.
func cloneFold(f *Fold) *Fold {
	b, err := json.Marshal(f)
	if err != nil {
		return nil
	}
	var out Fold
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return &out
}
