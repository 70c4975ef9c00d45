package state

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// The cache file is JSON Lines, so that a reader decodes it a line per
// CPU (most of a repeat `status` would otherwise be decoding it). Each
// line is one cacheLine: the head first (version, log place, the fold
// without its waves and runs), then the runs the log names, then each
// wave state followed by its agents, then the finished runs' facts; at
// most perLine runs or agents to a line.
type cacheLine struct {
	Head   *cacheHead           `json:"h,omitempty"`
	Logged []LoggedRun          `json:"l,omitempty"`
	Wave   *Wave                `json:"w,omitempty"`
	Agents []cachedAgent        `json:"a,omitempty"`
	Runs   map[string]CachedRun `json:"r,omitempty"`
}

type cacheHead struct {
	Version int      `json:"version"`
	Program string   `json:"program"`
	Log     LogPlace `json:"log"`
	Bad     []string `json:"bad"`
	Fold    *Fold    `json:"fold"` // WaveStates and Logged on the lines that follow
}

const perLine = 48

// cachedAgent is Agent as the cache file spells it: every field omitted
// when empty and short keys (Agent has no slice, so nothing is lost), a
// third fewer bytes to decode. The conversion between the two fails to
// compile when Agent gains a field this lacks.
type cachedAgent struct {
	ID             string       `json:"id,omitempty"`
	Title          string       `json:"ti,omitempty"`
	Role           string       `json:"ro,omitempty"`
	Executor       string       `json:"ex,omitempty"`
	State          string       `json:"st,omitempty"`
	Attempt        int          `json:"at,omitempty"`
	StartedAt      *time.Time   `json:"sa,omitempty"`
	FinishedAt     *time.Time   `json:"fa,omitempty"`
	ExitCode       *int         `json:"ec,omitempty"`
	Signal         string       `json:"sg,omitempty"`
	HeartbeatAgeMs *int64       `json:"hb,omitempty"`
	OutputAgeMs    *int64       `json:"oa,omitempty"`
	SessionName    string       `json:"sn,omitempty"`
	Backend        string       `json:"be,omitempty"`
	Pod            string       `json:"po,omitempty"`
	RunDir         string       `json:"rd,omitempty"`
	LogPath        string       `json:"lp,omitempty"`
	LastMarker     string       `json:"lm,omitempty"`
	StatusCode     string       `json:"sc,omitempty"`
	Detail         string       `json:"de,omitempty"`
	Usage          *usage.Usage `json:"us,omitempty"`
	ran            string       // set on views only, never in a fold: never cached
}

func toCached(as []Agent, p paths) []cachedAgent {
	out := make([]cachedAgent, len(as))
	for i, a := range as {
		a.RunDir, a.LogPath = p.short(a.RunDir), p.short(a.LogPath)
		out[i] = cachedAgent(a)
	}
	return out
}

func fromCached(as []cachedAgent, p paths) []Agent {
	out := make([]Agent, len(as))
	for i, a := range as {
		out[i] = Agent(a)
		out[i].RunDir, out[i].LogPath = p.long(a.RunDir), p.long(a.LogPath)
	}
	return out
}

// paths shortens the paths under the lane's state directory (most of the
// cache's bytes otherwise) to the rest after it. Other absolute paths are
// kept; a relative one is marked "./", which no rest starts with.
type paths struct{ base string } // with a trailing separator

func (p paths) short(s string) string {
	rest, ok := strings.CutPrefix(s, p.base)
	switch {
	case ok && rest != "" && !strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "./"):
		return rest
	case s == "" || strings.HasPrefix(s, "/"):
		return s
	}
	return "./" + s
}

func (p paths) long(s string) string {
	switch {
	case s == "" || strings.HasPrefix(s, "/"):
		return s
	case strings.HasPrefix(s, "./"):
		return s[2:]
	}
	return p.base + s
}

// encodeCache is c as the cache file's lines, the paths under base
// shortened.
func encodeCache(c *Cache, base string) []any {
	p := paths{base}
	fold := *c.Fold
	fold.WaveStates, fold.Logged = nil, nil
	out := []any{cacheLine{Head: &cacheHead{Version: c.Version, Program: c.Program, Log: c.Log, Bad: c.Bad, Fold: &fold}}}
	for lo := 0; lo < len(c.Fold.Logged); lo += perLine {
		l := slices.Clone(c.Fold.Logged[lo:min(lo+perLine, len(c.Fold.Logged))])
		for i := range l {
			l[i].RunDir = p.short(l[i].RunDir)
		}
		out = append(out, cacheLine{Logged: l})
	}
	for _, w := range c.Fold.WaveStates {
		as := w.Agents
		if as != nil {
			w.Agents = []Agent{} // on the lines that follow
		}
		out = append(out, cacheLine{Wave: &w})
		for lo := 0; lo < len(as); lo += perLine {
			out = append(out, cacheLine{Agents: toCached(as[lo:min(lo+perLine, len(as))], p)})
		}
	}
	var chunk map[string]CachedRun
	for dir, r := range c.Runs {
		if len(chunk) == 0 || len(chunk) == perLine {
			chunk = make(map[string]CachedRun, perLine)
			out = append(out, cacheLine{Runs: chunk})
		}
		chunk[p.short(dir)] = r
	}
	return out
}

// decodeCache reads a cache file written with base; an error for one
// that is corrupt, cut short or of another version.
func decodeCache(b []byte, base string) (*Cache, error) {
	p := paths{base}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return nil, errors.New("cut short")
	}
	// One goroutine: with its own reader for the long lines, a line per
	// CPU cost more CPU in goroutines and threads woken than it saved in
	// time (bench/status).
	raw := bytes.Split(b[:len(b)-1], []byte{'\n'})
	lines := make([]cacheLine, len(raw))
	for i, r := range raw {
		if err := decodeLine(r, &lines[i]); err != nil {
			return nil, err
		}
	}
	h := lines[0].Head
	if h == nil || h.Version != CacheVersion || h.Fold == nil {
		v := 0
		if h != nil {
			v = h.Version
		}
		return nil, fmt.Errorf("version %d, want %d", v, CacheVersion)
	}
	waves, runs := 0, 0
	for _, l := range lines[1:] {
		runs += len(l.Runs)
		if l.Wave != nil {
			waves++
		}
	}
	c := &Cache{Version: h.Version, Program: h.Program, Log: h.Log, Bad: h.Bad, Fold: h.Fold, Runs: make(map[string]CachedRun, runs)}
	f := c.Fold
	f.WaveStates = slices.Grow(f.WaveStates, waves)
	for i, l := range lines[1:] {
		for _, r := range l.Logged {
			r.RunDir = p.long(r.RunDir)
			f.Logged = append(f.Logged, r)
		}
		if l.Wave != nil {
			w := *l.Wave
			w.Agents = slices.Grow(w.Agents, agentsAfter(lines[i+2:]))
			f.WaveStates = append(f.WaveStates, w)
		}
		if l.Agents != nil {
			if len(f.WaveStates) == 0 {
				return nil, errors.New("agents before their wave")
			}
			w := &f.WaveStates[len(f.WaveStates)-1]
			w.Agents = append(w.Agents, fromCached(l.Agents, p)...)
		}
		for dir, r := range l.Runs {
			c.Runs[p.long(dir)] = r
		}
	}
	return c, nil
}

// agentsAfter counts the agents on the lines up to the next wave's: the
// room its wave's agents take.
func agentsAfter(lines []cacheLine) int {
	n := 0
	for _, l := range lines {
		if l.Wave != nil {
			break
		}
		n += len(l.Agents)
	}
	return n
}
