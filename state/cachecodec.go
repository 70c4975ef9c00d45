package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"sync"
	"sync/atomic"
)

// The cache file is JSON Lines, so that a reader decodes it a line per
// CPU (most of a repeat `status` would otherwise be decoding it): a head
// (version, log place, the fold without its waves, and how many lines
// follow), then one line per wave state, then the finished runs, at most
// runsPerLine to a line.
type cacheHead struct {
	Version  int      `json:"version"`
	Log      LogPlace `json:"log"`
	Bad      []string `json:"bad"`
	Fold     *Fold    `json:"fold"` // WaveStates on the lines that follow
	Waves    int      `json:"waves"`
	RunLines int      `json:"runLines"`
}

const runsPerLine = 48

// encodeCache is c as the cache file's lines.
func encodeCache(c *Cache) []any {
	fold := *c.Fold
	fold.WaveStates = nil
	head := cacheHead{Version: c.Version, Log: c.Log, Bad: c.Bad, Fold: &fold, Waves: len(c.Fold.WaveStates)}
	var chunks []map[string]CachedRun
	for dir, r := range c.Runs {
		if len(chunks) == 0 || len(chunks[len(chunks)-1]) == runsPerLine {
			chunks = append(chunks, make(map[string]CachedRun, runsPerLine))
		}
		chunks[len(chunks)-1][dir] = r
	}
	head.RunLines = len(chunks)
	out := []any{head}
	for _, w := range c.Fold.WaveStates {
		out = append(out, w)
	}
	for _, ch := range chunks {
		out = append(out, ch)
	}
	return out
}

// decodeCache reads a cache file; an error for one that is corrupt, cut
// short or of another version.
func decodeCache(b []byte) (*Cache, error) {
	first, rest, _ := bytes.Cut(b, []byte{'\n'})
	var head cacheHead
	if err := json.Unmarshal(first, &head); err != nil {
		return nil, err
	}
	if head.Version != CacheVersion || head.Fold == nil {
		return nil, fmt.Errorf("version %d, want %d", head.Version, CacheVersion)
	}
	lines := bytes.Split(rest, []byte{'\n'})
	if n := len(lines) - 1; n != head.Waves+head.RunLines || len(lines[n]) != 0 {
		return nil, errors.New("cut short or overlong")
	}
	waves := make([]Wave, head.Waves)
	chunks := make([]map[string]CachedRun, head.RunLines)
	errs := make([]error, len(lines)-1)
	parallel(len(lines)-1, func(i int) {
		if i < head.Waves {
			errs[i] = json.Unmarshal(lines[i], &waves[i])
		} else {
			errs[i] = json.Unmarshal(lines[i], &chunks[i-head.Waves])
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	c := &Cache{Version: head.Version, Log: head.Log, Bad: head.Bad, Fold: head.Fold, Runs: map[string]CachedRun{}}
	c.Fold.WaveStates = waves
	for _, ch := range chunks {
		for dir, r := range ch {
			c.Runs[dir] = r
		}
	}
	return c, nil
}

// parallel calls do(0..n-1) on one goroutine per CPU.
func parallel(n int, do func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				do(i)
			}
		}()
	}
	wg.Wait()
}
