package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// scriptedSubmitter stands for the command's submit queue: each wave's
// runs end as scripted (exit 0 when the script runs out), and a run that
// passes records its wave completed in the ledger, as a launch does.
type scriptedSubmitter struct {
	t         *testing.T
	layout    lanes.Layout
	ends      map[int][]RunEnd
	submitted []int
	byRun     map[string]int
	wait      func(ctx context.Context) error // when set, Wait blocks on it first
	noLedger  bool                            // a passing run forgets to record its wave
}

func (s *scriptedSubmitter) Submit(_ context.Context, n int) (string, bool, error) {
	s.submitted = append(s.submitted, n)
	id := fmt.Sprintf("run-%d", len(s.submitted))
	s.byRun[id] = n
	return id, len(s.submitted) == 1, nil
}

func (s *scriptedSubmitter) Wait(ctx context.Context, id string) (RunEnd, error) {
	if s.wait != nil {
		if err := s.wait(ctx); err != nil {
			return RunEnd{}, err
		}
	}
	n := s.byRun[id]
	end := RunEnd{State: "completed"}
	if q := s.ends[n]; len(q) > 0 {
		end, s.ends[n] = q[0], q[1:]
	}
	if end.ExitCode == 0 && !s.noLedger {
		if err := New(Options{Layout: s.layout, Lane: &config.Lane{Name: "main"}}, nil).markCompleted(n); err != nil {
			s.t.Fatal(err)
		}
	}
	return end, nil
}

func autonomousLane(t *testing.T, waves ...int) (AutonomousOptions, *scriptedSubmitter, *strings.Builder) {
	t.Helper()
	layout := lanes.New(t.TempDir(), ".wave", "p", "main")
	var ws []*wave.Wave
	for _, n := range waves {
		ws = append(ws, &wave.Wave{Number: n})
	}
	progress := &strings.Builder{}
	opt := AutonomousOptions{Layout: layout, Lane: &config.Lane{Name: "main"}, Waves: ws, MaxAttempts: 1, Progress: progress}
	return opt, &scriptedSubmitter{t: t, layout: layout, ends: map[int][]RunEnd{}, byRun: map[string]int{}}, progress
}

func TestAutonomousRunsEachRemainingWaveOnceLowestFirst(t *testing.T) {
	opt, sub, progress := autonomousLane(t, 0, 1, 2)
	if err := New(Options{Layout: opt.Layout, Lane: opt.Lane}, nil).markCompleted(0); err != nil {
		t.Fatal(err)
	}
	res, err := Autonomous(context.Background(), opt, sub)
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != LaneCompleted || res.ExitCode != 0 || res.StoppedAt != nil || len(res.Waves) != 2 ||
		res.Waves[0].Wave != 1 || res.Waves[1].Wave != 2 || fmt.Sprint(sub.submitted) != "[1 2]" {
		t.Fatalf("result %+v, submitted %v", res, sub.submitted)
	}
	for _, want := range []string{"autonomous: wave 1 attempt 1/1: run run-1 (queued behind the lane's active run)\n",
		"autonomous: wave 1 run run-1 completed (exit 0)\n", "autonomous: wave 2 attempt 1/1: run run-2\n"} {
		if !strings.Contains(progress.String(), want) {
			t.Fatalf("progress lacks %q:\n%s", want, progress)
		}
	}
	again, err := Autonomous(context.Background(), opt, sub)
	if err != nil || again.Result != LaneCompleted || len(again.Waves) != 0 || len(sub.submitted) != 2 {
		t.Fatalf("on a completed lane: %+v %v, submitted %v", again, err, sub.submitted)
	}
}

func TestAutonomousGivesUpOnAWaveAfterItsAttemptsWithItsExitCode(t *testing.T) {
	opt, sub, _ := autonomousLane(t, 0, 1)
	opt.MaxAttempts = 2
	sub.ends[0] = []RunEnd{{ExitCode: exitcode.Failed, State: "failed"}, {ExitCode: 42, State: "failed"}}
	res, err := Autonomous(context.Background(), opt, sub)
	if err != nil {
		t.Fatal(err)
	}
	if res.Result != LaneFailed || res.ExitCode != 42 || res.StoppedAt == nil || *res.StoppedAt != 0 ||
		len(res.Waves) != 1 || len(res.Waves[0].RunIDs) != 2 || fmt.Sprint(sub.submitted) != "[0 0]" ||
		!strings.Contains(res.Why, "wave 0 failed after 2 attempt(s) (exit 42)") {
		t.Fatalf("result %+v, submitted %v", res, sub.submitted)
	}
}

func TestAutonomousDoesNotRetryARunAPersonStopped(t *testing.T) {
	opt, sub, _ := autonomousLane(t, 0)
	opt.MaxAttempts = 3
	sub.ends[0] = []RunEnd{{ExitCode: exitcode.Failed, State: "stopped", Stopped: true}}
	res, err := Autonomous(context.Background(), opt, sub)
	if err != nil || res.Result != LaneFailed || len(sub.submitted) != 1 {
		t.Fatalf("result %+v %v, submitted %v", res, err, sub.submitted)
	}
}

func TestAutonomousStopsForAPersonBeforeAWaveAndAfterExit43(t *testing.T) {
	opt, sub, _ := autonomousLane(t, 0, 1)
	sub.ends[0] = []RunEnd{{ExitCode: exitcode.NeedsHuman, State: "failed"}}
	res, err := Autonomous(context.Background(), opt, sub)
	if err != nil || res.Result != LaneNeedsHuman || res.ExitCode != exitcode.NeedsHuman || *res.StoppedAt != 0 ||
		!strings.Contains(res.Why, "no safe retry (exit 43)") {
		t.Fatalf("after exit 43: %+v %v", res, err)
	}
	rec, err := coord.Post(opt.Layout.CoordinationPath(0), coord.Record{Kind: "blocker", AgentID: "A1", Summary: "schema \x1b[31mred"}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	res, err = Autonomous(context.Background(), opt, sub)
	if err != nil || res.Result != LaneNeedsHuman || len(sub.submitted) != 1 || !strings.Contains(res.Why, rec.ID) ||
		strings.Contains(res.Why, "\x1b") {
		t.Fatalf("with an open blocker: %+v %v, submitted %v", res, err, sub.submitted)
	}
}

// An escalation filed against a later wave holds that wave, not the
// ones before it: autonomous runs them and stops before the wave it
// holds, naming it.
func TestAutonomousRunsTheWavesBeforeTheOneAnEscalationHolds(t *testing.T) {
	opt, sub, _ := autonomousLane(t, 0, 1, 2)
	rec, err := coord.Post(opt.Layout.CoordinationPath(2), coord.Record{Kind: "human-escalation", Wave: 2, AgentID: "C1", Summary: "which region?"}, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	res, err := Autonomous(context.Background(), opt, sub)
	if err != nil || res.Result != LaneNeedsHuman || res.StoppedAt == nil || *res.StoppedAt != 2 || fmt.Sprint(sub.submitted) != "[0 1]" ||
		!strings.Contains(res.Why, rec.ID) || !strings.Contains(res.Why, "wave 2") {
		t.Fatalf("with an escalation against wave 2: %+v %v, submitted %v", res, err, sub.submitted)
	}
}

func TestAutonomousRefusesToRerunAWaveThatPassedButIsNotRecorded(t *testing.T) {
	opt, sub, _ := autonomousLane(t, 0)
	sub.noLedger = true
	_, err := Autonomous(context.Background(), opt, sub)
	if err == nil || !strings.Contains(err.Error(), "wave 0 passed but is not recorded completed") || len(sub.submitted) != 1 {
		t.Fatalf("err %v, submitted %v", err, sub.submitted)
	}
}

func TestAnInterruptedAutonomousSaysItsRunGoesOn(t *testing.T) {
	opt, sub, _ := autonomousLane(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	sub.wait = func(ctx context.Context) error { cancel(); <-ctx.Done(); return ctx.Err() }
	_, err := Autonomous(ctx, opt, sub)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted at wave 0; its run run-1 goes on") {
		t.Fatalf("err %v", err)
	}
}
