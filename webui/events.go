package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// message is one Server-Sent Event: its name and its one-line JSON data.
type message struct {
	event string
	data  []byte
}

// Names of the stream's events (docs/serve.md).
const (
	evLane         = "lane"         // a line of the lane's events.jsonl
	evBacklog      = "backlog"      // {"run", "event"}: a line of a backlog run's log
	evCoordination = "coordination" // {"wave", "record"}: a line of a wave's coordination log
	evChange       = "change"       // something else under the state directory changed
	evResync       = "resync"       // this client fell behind: reload everything
)

// changeEvery groups the many small writes of one step (a runtime
// record, a log line) into one "change" event: at most one per period,
// and one even while an agent writes output without pause.
const changeEvery = 250 * time.Millisecond

type subscriber struct {
	ch     chan message
	lagged atomic.Bool
}

// hub follows the lane's append-only logs with fsnotify and fans every
// new line out to the stream's subscribers.
type hub struct {
	layout lanes.Layout
	log    *slog.Logger
	done   chan struct{} // closed when run ends: streams finish
	ready  chan struct{} // closed once the first walk of the tree is done

	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	maxSubs int // 0: no cap

	// follow state, touched by run's goroutine only
	offsets map[string]int64
	partial map[string][]byte
}

func newHub(l lanes.Layout, log *slog.Logger) *hub {
	return &hub{layout: l, log: log, done: make(chan struct{}), ready: make(chan struct{}), subs: map[*subscriber]struct{}{},
		offsets: map[string]int64{}, partial: map[string][]byte{}}
}

// subscribe adds a stream; nil when maxSubs are open already.
func (h *hub) subscribe() *subscriber {
	s := &subscriber{ch: make(chan message, 256)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxSubs > 0 && len(h.subs) >= h.maxSubs {
		return nil
	}
	h.subs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// publish never blocks the follower: a subscriber whose buffer is full
// is told to resync instead.
func (h *hub) publish(m message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- m:
		default:
			s.lagged.Store(true)
		}
	}
}

// run watches the state directory tree until ctx ends. Files that exist
// when it starts are followed from their end; files created later from
// their start.
func (h *hub) run(ctx context.Context) error {
	defer close(h.done)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", h.layout.StateDir, err)
	}
	defer w.Close()
	if err := jsonfile.MkdirAll(h.layout.StateDir); err != nil {
		return fmt.Errorf("watch %s: %w", h.layout.StateDir, err)
	}
	h.addTree(w, h.layout.StateDir, true)
	close(h.ready)
	var change <-chan time.Time // pending "change", nil when none
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-w.Events:
			if strings.Contains(ev.Name, string(filepath.Separator)+".tmp") {
				continue
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				h.forget(ev.Name) // a pruned run or a rotated log
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					h.addTree(w, ev.Name, false)
					continue
				}
				if _, ok := h.kind(ev.Name); ok {
					h.offsets[ev.Name] = 0 // a new or rotated log
					delete(h.partial, ev.Name)
				}
			}
			if kind, ok := h.kind(ev.Name); ok {
				h.readNew(ev.Name, kind)
				continue
			}
			if change == nil {
				change = time.After(changeEvery)
			}
		case err := <-w.Errors:
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return fmt.Errorf("watch %s: %w", h.layout.StateDir, err)
			}
			h.publish(message{event: evResync, data: []byte("{}")})
		case <-change:
			change = nil
			h.publish(message{event: evChange, data: []byte("{}")})
		}
	}
}

// addTree watches dir and every directory under it; at start existing
// logs are followed from their end, later ones (a directory that just
// appeared) from their start.
func (h *hub) addTree(w *fsnotify.Watcher, dir string, atStart bool) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".tmp" || d.Name() == "dry-run" {
				return filepath.SkipDir
			}
			_ = w.Add(p)
			return nil
		}
		if kind, ok := h.kind(p); ok {
			if _, known := h.offsets[p]; !known {
				if fi, err := d.Info(); err == nil && atStart {
					h.offsets[p] = fi.Size()
				} else {
					h.offsets[p] = 0
				}
				if !atStart {
					h.readNew(p, kind)
				}
			}
		}
		return nil
	})
}

// logKind is which followed log a path is, with its backlog run id or
// wave number.
type logKind struct {
	event string
	key   string // backlog run id or wave number
}

func (h *hub) kind(path string) (logKind, bool) {
	rel, err := filepath.Rel(h.layout.StateDir, path)
	if err != nil {
		return logKind{}, false
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	switch {
	case len(parts) == 1 && parts[0] == "events.jsonl":
		return logKind{event: evLane}, true
	case len(parts) == 3 && parts[0] == "backlog" && parts[2] == "events.jsonl":
		return logKind{event: evBacklog, key: parts[1]}, true
	case len(parts) == 3 && parts[0] == "waves" && parts[2] == "coordination.jsonl":
		if _, err := strconv.Atoi(parts[1]); err == nil {
			return logKind{event: evCoordination, key: parts[1]}, true
		}
	}
	return logKind{}, false
}

// readNew publishes the complete lines appended to path since the last
// read; a file shorter than before was truncated and is read again.
func (h *hub) readNew(path string, k logKind) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	off := h.offsets[path]
	if fi, err := f.Stat(); err == nil && fi.Size() < off {
		off = 0
		delete(h.partial, path)
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		h.log.Warn("serve: read log", "path", path, "err", err)
		return
	}
	h.offsets[path] = off + int64(len(b))
	buf := append(h.partial[path], b...)
	end := bytes.LastIndexByte(buf, '\n')
	if end < 0 {
		h.partial[path] = buf
		return
	}
	h.partial[path] = append([]byte(nil), buf[end+1:]...)
	for line := range bytes.SplitSeq(buf[:end], []byte{'\n'}) {
		if m, ok := k.message(line); ok {
			h.publish(m)
		}
	}
}

// message wraps one log line as the stream's data: always one line of
// JSON, a corrupt line passed on as a string so nothing is lost.
func (k logKind) message(line []byte) (message, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return message{}, false
	}
	var raw json.RawMessage
	var c bytes.Buffer
	if json.Compact(&c, line) == nil {
		raw = c.Bytes()
	} else {
		raw, _ = json.Marshal(string(line))
	}
	var data []byte
	switch k.event {
	case evBacklog:
		data, _ = json.Marshal(struct {
			Run   string          `json:"run"`
			Event json.RawMessage `json:"event"`
		}{k.key, raw})
	case evCoordination:
		n, _ := strconv.Atoi(k.key)
		data, _ = json.Marshal(struct {
			Wave   int             `json:"wave"`
			Record json.RawMessage `json:"record"`
		}{n, raw})
	default:
		data = raw
	}
	return message{event: k.event, data: data}, true
}

// forget drops what is known of path and of everything under it.
func (h *hub) forget(path string) {
	prefix := path + string(filepath.Separator)
	for p := range h.offsets {
		if p == path || strings.HasPrefix(p, prefix) {
			delete(h.offsets, p)
			delete(h.partial, p)
		}
	}
}
