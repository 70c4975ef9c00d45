package main

import (
	"bufio"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// startWaitChange starts `status --wait-change --exit-code` and returns
// once it watches (its stderr says so); done gets its exit code.
func startWaitChange(t *testing.T, r *testRepo, extra ...string) (done chan int) {
	t.Helper()
	cmd := r.command(ctxFor(t), append([]string{"status", "--wait-change", "--exit-code"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() || !strings.Contains(sc.Text(), "waiting for the lane's state to change") {
		t.Fatalf("status --wait-change did not start watching: %q", sc.Text())
	}
	done = make(chan int, 1)
	go func() {
		for sc.Scan() {
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
			return
		}
		done <- 0
	}()
	return done
}

// An agent asking a person a question wakes `status --wait-change
// --exit-code` with 20 (input required).
func TestStatusWaitChangeExitsTwentyWhenAnAgentAsksAQuestion(t *testing.T) {
	r := newRepo(t)
	r.writeWave(0, append([]agentSpec{implAgent("A1")}, closureAgents()...)...)
	if res := launch(t, r); res.code != 0 {
		t.Fatalf("launch: %d %s", res.code, res.stderr)
	}
	if res := r.run(ctxFor(t), "status", "--exit-code"); res.code != exitcode.StatusCompleted {
		t.Fatalf("status --exit-code of a completed lane: %d", res.code)
	}
	done := startWaitChange(t, r, "--timeout-seconds", "100")
	post := r.run(ctxFor(t), "coord", "post", "--lane", "main", "--wave", "0", "--agent", "A1", "--kind", "human-feedback",
		"--summary", "which database should A1 target?")
	if post.code != 0 {
		t.Fatalf("post: %d %s", post.code, post.stderr)
	}
	if code := <-done; code != exitcode.StatusInputRequired {
		t.Fatalf("status --wait-change --exit-code: %d, want 20", code)
	}
}

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
