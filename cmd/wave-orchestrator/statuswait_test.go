package main

import (
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// The exit code's classes, from the reduced lane state.
func TestLaneCodeClassifiesTheLane(t *testing.T) {
	w := func(status string, blockers ...state.Blocker) state.Wave {
		return state.Wave{Status: status, Blockers: blockers}
	}
	for _, tc := range []struct {
		name  string
		waves []state.Wave
		want  int
	}{
		{"nothing ran", []state.Wave{w(state.WavePending)}, exitcode.StatusRunning},
		{"all completed", []state.Wave{w(state.WaveCompleted), w(state.WavePending)}, exitcode.StatusCompleted},
		{"running", []state.Wave{w(state.WaveCompleted), w(state.WaveRunning)}, exitcode.StatusRunning},
		{"interrupted", []state.Wave{w(state.WaveInterrupted)}, exitcode.StatusRunning},
		{"failed", []state.Wave{w(state.WaveFailed)}, exitcode.StatusFailed},
		{"stopped", []state.Wave{w(state.WaveStopped)}, exitcode.StatusFailed},
		{"question while running", []state.Wave{w(state.WaveRunning, state.Blocker{Kind: "clarification-request"})}, exitcode.StatusInputRequired},
		{"agent blocker is no question", []state.Wave{w(state.WaveRunning, state.Blocker{Kind: "blocker"})}, exitcode.StatusRunning},
	} {
		if got := laneCode(state.Lane{Waves: tc.waves}); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
