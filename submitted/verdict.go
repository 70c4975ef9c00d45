package submitted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// failuresNamed bounds how many of a wave's failures a run's why names.
const failuresNamed = 3

// verdict decides how a launcher's run ended from its exit code, the
// events the launcher appended to the lane's log while it ran, whether
// `stop` asked the lane to stop meanwhile, and the last line the
// launcher wrote to stderr. A person stopped it when stop asked or the
// launcher recorded a wave stopped; a failure's why is the failures of
// the last wave the run ended, else the launcher's last word.
func verdict(code int, evs []state.Event, stopAsked bool, lastLine string) (stopped bool, why string) {
	end, ok := lastWaveEnd(evs)
	stopped = stopAsked || ok && end.Action == state.WaveStopped
	switch {
	case code == 0:
		return false, ""
	case stopped && lastLine != "":
		return true, lastLine
	case stopped && ok && end.Action == state.WaveStopped:
		return true, fmt.Sprintf("wave %d stopped on request", end.Wave)
	case stopped:
		return true, "stopped on request"
	case ok && (end.Action == state.WaveFailed || end.Action == state.WaveBlocked):
		return false, waveWhy(end)
	case lastLine != "":
		return false, lastLine
	}
	return false, fmt.Sprintf("launcher exited %d without saying why", code)
}

// lastWaveEnd is the last wave_run event that ended a wave.
func lastWaveEnd(evs []state.Event) (state.Event, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.EntityType != state.EntityWaveRun {
			continue
		}
		switch ev.Action {
		case state.WaveCompleted, state.WaveFailed, state.WaveBlocked, state.WaveStopped:
			return ev, true
		}
	}
	return state.Event{}, false
}

// waveWhy is "wave 2 failed: A1: missing-marker (detail); …", naming the
// first failures of the wave's end.
func waveWhy(ev state.Event) string {
	var d struct {
		Failures []state.Failure `json:"failures"`
	}
	if b, err := json.Marshal(ev.Data); err == nil {
		_ = json.Unmarshal(b, &d)
	}
	head := fmt.Sprintf("wave %d %s", ev.Wave, ev.Action)
	if len(d.Failures) == 0 {
		return head + "; `status -w " + fmt.Sprint(ev.Wave) + "` shows why"
	}
	var parts []string
	for i, f := range d.Failures {
		if i == failuresNamed {
			parts = append(parts, fmt.Sprintf("and %d more (`status -w %d`)", len(d.Failures)-i, ev.Wave))
			break
		}
		who := f.AgentID
		if who == "" {
			who = f.Gate
		}
		s := who + ": " + f.StatusCode
		if detail := strings.Join(strings.Fields(f.Detail), " "); detail != "" {
			s += " (" + strings.TrimSuffix(detail, ".") + ")"
		}
		parts = append(parts, s)
	}
	return head + ": " + strings.Join(parts, "; ")
}

// stopAskedSince reports whether the lane's control file asks a stop
// made at or after since: `stop` writes it for the launcher it finds,
// and the next launcher removes it before it starts.
func stopAskedSince(path string, since time.Time) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var c struct {
		Stop        bool      `json:"stop"`
		RequestedAt time.Time `json:"requestedAt"`
	}
	if json.Unmarshal(b, &c) != nil {
		return false
	}
	return c.Stop && !c.RequestedAt.Before(since)
}

// tailBuffer keeps the last bytes written to it: a launcher's stderr,
// whose last line is the why of a failure that names no wave.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := bytes.TrimRight(t.b, "\r\n\t ")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}
