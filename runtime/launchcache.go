package runtime

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// launchCache remembers the launch facts of each run directory for as
// long as its launch.json is the same file (inode, size, mtime): the
// launcher and the watcher observe every run each second, and launch.json
// is written once per run.
type launchCache struct {
	mu      sync.Mutex
	entries map[string]launchEntry
}

type launchEntry struct {
	id    fileID
	facts launchFacts
}

// fileID tells one version of a file from another without reading it.
type fileID struct {
	ino   uint64
	size  int64
	mtime time.Time
}

func statID(path string) (fileID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, err
	}
	id := fileID{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = st.Ino
	}
	return id, nil
}

func (c *launchCache) read(runDir string) (launchFacts, error) {
	runDir = filepath.Clean(runDir)
	id, err := statID(filepath.Join(runDir, launchFile))
	if err != nil {
		return launchFacts{}, err
	}
	c.mu.Lock()
	e, ok := c.entries[runDir]
	c.mu.Unlock()
	if ok && e.id == id {
		return e.facts, nil
	}
	lf, err := readLaunchFile(runDir)
	if err != nil {
		return lf, err
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]launchEntry{}
	}
	c.entries[runDir] = launchEntry{id, lf}
	c.mu.Unlock()
	return lf, nil
}
