package questions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// MaxText bounds a question's text and its context.
const MaxText = 16 << 10

// Ask is a question an agent of a wave asks.
type Ask struct {
	Wave     int
	AgentID  string
	Attempt  int
	Text     string
	Context  string
	Blocking bool
}

// Post appends the question to wave a.Wave's coordination log (a
// human-feedback record; a blocking one holds closure until answered)
// and returns it.
func Post(layout lanes.Layout, a Ask, now time.Time) (Question, error) {
	a.Text, a.Context = strings.TrimSpace(a.Text), strings.TrimSpace(a.Context)
	switch {
	case a.Text == "":
		return Question{}, errors.New("ask: the question is empty")
	case len(a.Text) > MaxText || len(a.Context) > MaxText:
		return Question{}, fmt.Errorf("ask: the question and its context are limited to %d bytes each", MaxText)
	case strings.TrimSpace(a.AgentID) == "":
		return Question{}, errors.New("ask: no agent id (set by the launcher as WAVE_AGENT_ID; or pass --agent)")
	}
	rec := coord.Record{ID: NewID(), Kind: Kind, Wave: a.Wave, Lane: layout.Lane, AgentID: a.AgentID,
		Targets: []string{"human"}, Summary: a.Text, Detail: a.Context, Source: "agent"}
	if a.Attempt > 0 {
		k := a.Attempt
		rec.Attempt = &k
	}
	if !a.Blocking {
		rec.Priority = "low"
	}
	rec, err := coord.Post(layout.CoordinationPath(a.Wave), rec, &a.Blocking, now)
	if err != nil {
		return Question{}, fmt.Errorf("ask: %w", err)
	}
	return FromRecord(layout.Lane, rec, false), nil
}

// WatchWave reports every write to wave n's coordination log on the
// returned channel (coalesced: one pending value at most) until ctx
// ends. It watches the wave's directory with fsnotify, since the log may
// not exist yet; an overflow counts as a write.
func WatchWave(ctx context.Context, layout lanes.Layout, n int) (<-chan struct{}, error) {
	dir := layout.WaveDir(n)
	if err := jsonfile.MkdirAll(dir); err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	log := filepath.Base(layout.CoordinationPath(n))
	out := make(chan struct{}, 1)
	go func() {
		defer w.Close()
		for {
			var changed bool
			select {
			case <-ctx.Done():
				return
			case ev := <-w.Events:
				changed = filepath.Base(ev.Name) == log
			case err := <-w.Errors:
				changed = errors.Is(err, fsnotify.ErrEventOverflow)
			}
			if changed {
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
	}()
	return out, nil
}

// Wait blocks until question id of wave n is answered and returns it,
// woken by WatchWave; it ends with ctx's error when ctx ends first.
func Wait(ctx context.Context, layout lanes.Layout, n int, id string) (Question, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changes, err := WatchWave(ctx, layout, n)
	if err != nil {
		return Question{}, err
	}
	for {
		// Read after the watch is in place: an answer between the two
		// is not missed.
		qs, _, err := WaveQuestions(layout, n, nil)
		if err != nil {
			return Question{}, err
		}
		i := slices.IndexFunc(qs, func(q Question) bool { return q.ID == id })
		if i < 0 {
			return Question{}, &UnknownIDError{ID: id, Lane: layout.Lane}
		}
		if qs[i].State == Answered {
			return qs[i], nil
		}
		select {
		case <-ctx.Done():
			return Question{}, ctx.Err()
		case <-changes:
		}
	}
}
