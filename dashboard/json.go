package dashboard

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// StatusJSON returns the `status --json` document (docs/status-schema.md):
// the lane state, only wave n when n >= 0, with every list present as an
// array (never null) so consumers can iterate without checks.
func StatusJSON(l state.Lane, wave int) state.Lane {
	out := l
	out.Waves = make([]state.Wave, 0, len(l.Waves))
	for _, w := range l.Waves {
		if wave >= 0 && w.Wave != wave {
			continue
		}
		out.Waves = append(out.Waves, normalizeWave(w))
	}
	if wave >= 0 {
		out.LastEvents = filterEvents(l.LastEvents, wave)
	}
	out.Problems = nonNil(out.Problems)
	out.LastEvents = nonNil(out.LastEvents)
	return out
}

// WriteStatusJSON encodes StatusJSON(l, wave) indented, with a newline.
// Nothing is written when encoding fails.
func WriteStatusJSON(w io.Writer, l state.Lane, wave int) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(StatusJSON(l, wave)); err != nil {
		return fmt.Errorf("status json for lane %s: %w", l.Lane, err)
	}
	return nil
}

func normalizeWave(w state.Wave) state.Wave {
	w.Closure = nonNil(w.Closure)
	for i := range w.Closure {
		w.Closure[i].Agents = nonNil(w.Closure[i].Agents)
	}
	w.Agents = nonNil(w.Agents)
	w.Failures = nonNil(w.Failures)
	w.Blockers = nonNil(w.Blockers)
	w.Questions = nonNil(w.Questions)
	w.LastEvents = nonNil(w.LastEvents)
	return w
}

func filterEvents(evs []state.EventRef, wave int) []state.EventRef {
	out := []state.EventRef{}
	for _, e := range evs {
		if e.Wave == wave {
			out = append(out, e)
		}
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	// Copy so normalising never aliases the caller's lane.
	return append(make([]T, 0, len(s)), s...)
}
