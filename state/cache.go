package state

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CacheVersion is the status cache's format (lanes.Layout.StatusCachePath
// names it in the file too). A cache of another version is ignored and
// rebuilt.
const CacheVersion = 1

// Cache is what a lane's event log and its finished runs reduced to when
// `status` last read them: the Fold with the place in the log it reached,
// and the facts of every run whose runtime record was terminal, each with
// the identity of the files they came from. It is an optimisation only: a
// reader that finds it missing, corrupt, of another version, or describing
// files that changed since reads those files again, and gives the same
// answer as without it.
type Cache struct {
	Version int `json:"version"`
	// Program is the build that wrote the cache (ProgramID): the fold is
	// the reducer's state, so another build's, whose reducer may differ,
	// is not read.
	Program string               `json:"program"`
	Log     LogPlace             `json:"log"`
	Fold    *Fold                `json:"fold"`
	Bad     []string             `json:"bad"` // the unreadable lines folded, as ReadEvents names them
	Runs    map[string]CachedRun `json:"runs"`
}

// FileKey is a file's identity as stat gives it: a file replaced (a new
// inode), rewritten or appended to (size, mtime) has another key. In the
// cache file it is one string, "name|size|mtime|inode" or "name|-" for a
// missing file: a fifth of the cache's values fewer to decode.
type FileKey struct {
	// Name is the file's path, or for a run's file its name in the run
	// directory.
	Name    string
	Missing bool
	Size    int64
	ModNs   int64
	Inode   uint64
}

// MarshalText is the key as the cache file spells it.
func (k FileKey) MarshalText() ([]byte, error) {
	if k.Missing {
		return []byte(k.Name + "|-"), nil
	}
	return fmt.Appendf(nil, "%s|%d|%d|%d", k.Name, k.Size, k.ModNs, k.Inode), nil
}

// UnmarshalText reads MarshalText's spelling; the name may hold a "|".
func (k *FileKey) UnmarshalText(b []byte) error {
	s := string(b)
	if name, ok := strings.CutSuffix(s, "|-"); ok {
		*k = FileKey{Name: name, Missing: true}
		return nil
	}
	var nums [3]int64
	for i := 2; i >= 0; i-- {
		j := strings.LastIndexByte(s, '|')
		if j < 0 {
			return fmt.Errorf("file key %q: not name|size|mtime|inode", b)
		}
		n, err := strconv.ParseInt(s[j+1:], 10, 64)
		if err != nil {
			return fmt.Errorf("file key %q: %w", b, err)
		}
		nums[i], s = n, s[:j]
	}
	*k = FileKey{Name: s, Size: nums[0], ModNs: nums[1], Inode: uint64(nums[2])}
	return nil
}

// LogPlace is how far the Fold read the lane's log: the rotated
// generation (events.jsonl.1) whole, and events.jsonl up to Current.Size
// bytes (Lines lines, every one ending in a newline), whose last
// TailWindow bytes hash to TailSum.
type LogPlace struct {
	Rotated FileKey `json:"rotated"`
	Current FileKey `json:"current"`
	Lines   int     `json:"lines"`
	TailSum string  `json:"tailSum"`
}

// CachedRun is a finished run's facts and the files they came from.
type CachedRun struct {
	Files []FileKey `json:"f"`
	Facts RunFacts  `json:"r"`
}

// TailWindow is how many bytes before its place in events.jsonl the cache
// hashes: a log truncated, rewritten or replaced in place under the same
// inode differs there (every event carries a random id and a timestamp).
const TailWindow = 4096

// Usable reports whether c can be read by program (ProgramID): this
// version, written by this build, with a fold.
func (c *Cache) Usable(program string) bool {
	return c != nil && c.Version == CacheVersion && c.Program == program && c.Fold != nil
}

// Continues reports whether the log as stat sees it now (rotated,
// current) can be the log p describes with lines appended: the same
// rotated generation, the same current file no shorter than was read. The
// bytes before the place must still match (TailMatches).
func (p LogPlace) Continues(rotated, current FileKey) bool {
	return rotated == p.Rotated && !p.Current.Missing && !current.Missing &&
		current.Name == p.Current.Name && current.Inode == p.Current.Inode && current.Size >= p.Current.Size
}

// TailMatches reports whether window, the TailWindow bytes (or fewer, from
// the start of the file) before the place, are the bytes folded.
func (p LogPlace) TailMatches(window []byte) bool { return TailSum(window) == p.TailSum }

// TailSum is the hash LogPlace keeps of the bytes before its place.
func TailSum(window []byte) string {
	s := sha256.Sum256(window)
	return hex.EncodeToString(s[:])
}

// WindowStart is where the TailWindow before offset starts.
func WindowStart(offset int64) int64 { return max(0, offset-TailWindow) }

// CompleteLines splits b into the whole lines at its start (each ending
// in a newline) and what follows the last newline: a line a writer may
// still be appending, folded for this read but not kept in the cache.
func CompleteLines(b []byte) (complete, partial []byte) {
	i := bytes.LastIndexByte(b, '\n')
	return b[:i+1], b[i+1:]
}

// Fresh reports whether the run's files are still those its facts came
// from: now are their keys as stat gives them now, in the same order.
func (r CachedRun) Fresh(now []FileKey) bool {
	return len(r.Files) > 0 && slices.Equal(r.Files, now)
}

// FileNames are the names of r's files in its run directory.
func (r CachedRun) FileNames() []string {
	out := make([]string, len(r.Files))
	for i, k := range r.Files {
		out[i] = k.Name
	}
	return out
}
