package questions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
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

// Wait blocks until question id of wave n is answered and returns it;
// it watches the wave's directory with fsnotify (the log is appended to)
// and ends with ctx's error when ctx ends first.
func Wait(ctx context.Context, layout lanes.Layout, n int, id string) (Question, error) {
	dir := layout.WaveDir(n)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Question{}, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return Question{}, fmt.Errorf("watch %s: %w", dir, err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return Question{}, fmt.Errorf("watch %s: %w", dir, err)
	}
	log := filepath.Base(layout.CoordinationPath(n))
	for {
		// Read after the watch is in place: an answer between the two
		// is not missed.
		qs, _, err := WaveQuestions(layout, n, nil)
		if err != nil {
			return Question{}, err
		}
		found := false
		for _, q := range qs {
			if q.ID == id {
				found = true
				if q.State == Answered {
					return q, nil
				}
			}
		}
		if !found {
			return Question{}, &UnknownIDError{ID: id, Lane: layout.Lane}
		}
		for changed := false; !changed; {
			select {
			case <-ctx.Done():
				return Question{}, ctx.Err()
			case ev := <-w.Events:
				changed = filepath.Base(ev.Name) == log
			case err := <-w.Errors:
				if !errors.Is(err, fsnotify.ErrEventOverflow) {
					return Question{}, fmt.Errorf("watch %s: %w", dir, err)
				}
				changed = true
			}
		}
	}
}
