package runs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func scratchLane(t *testing.T) (*config.Lane, lanes.Layout) {
	root := t.TempDir()
	lane := &config.Lane{Name: "main", RepoRoot: root, Runtime: config.Runtime{TimeoutMinutes: 60, HeartbeatIntervalMs: 500}}
	return lane, lanes.New(root, "", "", "main")
}

// TestThePayloadsDeadlineIsOnTheRealClock: the runner reads the deadline
// in launch.json on the real clock, so it is counted from now, shortened
// by the executor's budget unless the run's minutes are fixed (a
// reviewer's backlog.verifyTimeoutMinutes).
func TestThePayloadsDeadlineIsOnTheRealClock(t *testing.T) {
	budget := 5
	for _, c := range []struct {
		name    string
		minutes int
		fixed   bool
		want    int
	}{
		{"the lane timeout", 60, false, 5},
		{"a longer run, still shortened by the budget", 120, false, 5},
		{"fixed minutes, whatever the budget", 20, true, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			lane, layout := scratchLane(t)
			s := localSpec(lane, layout, "/opt/self")
			s.Build.Resolved.Budget = &wave.Budget{Minutes: &budget}
			s.Minutes, s.FixedMinutes = c.minutes, c.fixed
			before := time.Now()
			p, got, err := Payload(s)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("minutes = %d, want %d", got, c.want)
			}
			lo, hi := before.Add(time.Duration(c.want)*time.Minute), time.Now().Add(time.Duration(c.want)*time.Minute)
			if p.DeadlineAt == nil || p.DeadlineAt.Before(lo) || p.DeadlineAt.After(hi) {
				t.Errorf("deadline %v, want %d minutes from now (%v..%v)", p.DeadlineAt, c.want, lo, hi)
			}
		})
	}
}

// TestThePayloadCarriesTheRunAndTheLane: the prompt is written as given,
// the run's names and files are where the runner and the loops look, and
// the lane's runtime settings ride along.
func TestThePayloadCarriesTheRunAndTheLane(t *testing.T) {
	lane, layout := scratchLane(t)
	s := localSpec(lane, layout, "/opt/self")
	s.PromptHash, s.SilenceMs = "h1", 90000
	p, _, err := Payload(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(s.RunDir, lanes.PromptFile))
	if err != nil || string(b) != s.Prompt {
		t.Errorf("prompt file = %q, %v; want %q", b, err, s.Prompt)
	}
	if p.RunID != s.RunID || p.AgentID != "A1" || p.ExecutorID != executor.Local || p.Attempt != 1 ||
		p.WaveNumber != 1 || p.PromptHash != "h1" || p.SilenceMs != 90000 || p.OrchestratorID != "test" {
		t.Errorf("payload names %+v", p)
	}
	if p.SocketName != layout.Socket() || p.SessionName != lanes.SessionName(1, "A1") || p.Cwd != lane.RepoRoot ||
		p.StatusPath != filepath.Join(s.RunDir, lanes.StatusFile) || p.RuntimePath != filepath.Join(s.RunDir, lanes.RuntimeFile) ||
		p.LogPath != filepath.Join(s.RunDir, lanes.LogFile) {
		t.Errorf("payload places %+v", p)
	}
	if p.HeartbeatIntervalMs != 500 || len(p.Argv) == 0 || p.Argv[0] != "/opt/self" || p.Usage == nil {
		t.Errorf("payload runtime %+v", p)
	}
}

// TestAReviewerIsNeverRetriedOnARateLimit: NoRateLimitRetry clears the
// retries an executor that can hit a rate limit would get.
func TestAReviewerIsNeverRetriedOnARateLimit(t *testing.T) {
	lane, layout := scratchLane(t)
	lane.Runtime.RateLimitRetries = 2
	s := localSpec(lane, layout, "/opt/self")
	s.Build.Resolved = executor.Resolved{ID: executor.Codex}
	p, _, err := Payload(s)
	if err != nil {
		t.Fatal(err)
	}
	if p.RateLimit.Retries == 0 {
		t.Fatalf("a codex run gets no rate-limit retries (%+v): the case below proves nothing", p.RateLimit)
	}
	s.NoRateLimitRetry = true
	if p, _, err = Payload(s); err != nil || p.RateLimit.Retries != 0 {
		t.Errorf("reviewer's rate limit = %+v, %v; want no retries", p.RateLimit, err)
	}
}

// TestAPayloadErrorNamesTheRun: a run that cannot be built says which.
func TestAPayloadErrorNamesTheRun(t *testing.T) {
	lane, layout := scratchLane(t)
	s := localSpec(lane, layout, "")
	if _, _, err := Payload(s); err == nil || !strings.Contains(err.Error(), "wave 1 agent A1") {
		t.Fatalf("err = %v, want one naming wave 1 agent A1", err)
	}
}
