package supervisor

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// watchFinalChecks waits, once the final PR is open, for its required
// checks (backlog.checks; branch-protection: the base's) to conclude, up
// to backlog.checksTimeoutMinutes from the first look, and records what
// they said: `backlog status`, the final-pr-checks notice and the end
// block show it. A red or unfinished result needs a person (exit 43);
// the PR stays as it is. `backlog stop` cuts the wait short.
func (s *Supervisor) watchFinalChecks(ctx context.Context) error {
	r := s.run()
	if !s.checksOn() || r.FinalPR == nil || r.FinalPR.Number == 0 {
		return nil
	}
	required, err := s.requiredChecks(ctx, r.Info.Base)
	if err != nil || len(required) == 0 {
		return err
	}
	head, ok, err := s.o.Git.RemoteHead(ctx, r.Info.WaveBranch)
	if err != nil || !ok {
		return err
	}
	if st := r.FinalChecks; st != nil && st.Commit == head && st.Outcome != backlog.ChecksPending && st.Outcome != backlog.ChecksMissing {
		return nil // concluded before a restart
	}
	s.printf("final pull request: waiting for its checks (%s) on %s", backlog.OneLine(strings.Join(required, ", ")), short(head))
	timeout := time.Duration(s.o.Config.Backlog.ChecksTimeoutMinutes) * time.Minute
	for {
		got, err := s.o.Source.(checksSource).Checks(ctx, head, required)
		if err != nil {
			return fmt.Errorf("checks of the final pull request: %w", err)
		}
		v := backlog.JudgeChecks(required, got)
		if err := s.recordFinalChecks(head, v); err != nil {
			return err
		}
		if !v.Waiting() {
			return nil
		}
		if s.o.Now().Sub(r.FinalChecks.Since) >= timeout {
			return s.emit(backlog.Event{Kind: backlog.EvChecks, Commit: head, Outcome: backlog.ChecksTimedOut, Detail: v.Line()})
		}
		if stopped, err := s.sleepUnlessStopped(ctx, s.o.ChecksPoll); err != nil || stopped {
			if stopped {
				s.printf("final pull request: no longer waiting for its checks (backlog stop)")
			}
			return err
		}
	}
}

// recordFinalChecks records a look at the final PR's head that changed
// the outcome (or the head).
func (s *Supervisor) recordFinalChecks(head string, v backlog.ChecksVerdict) error {
	if st := s.run().FinalChecks; st != nil && st.Commit == head && st.Outcome == v.Outcome {
		return nil
	}
	url := ""
	if len(v.Failed) > 0 {
		url = v.Failed[0].URL
	}
	return s.emit(backlog.Event{Kind: backlog.EvChecks, Commit: head, Outcome: v.Outcome, Detail: v.Line(), URL: url})
}

// sleepUnlessStopped waits d, looking for a stop request every tick.
func (s *Supervisor) sleepUnlessStopped(ctx context.Context, d time.Duration) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(s.o.Tick)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-t.C:
			return false, nil
		case <-tick.C:
			if s.stopRequested() {
				return true, nil
			}
		}
	}
}

// finalChecksLine is the end block's line about the final PR's checks,
// "" when they were not watched.
func (s *Supervisor) finalChecksLine() string {
	st := s.run().FinalChecks
	if st == nil {
		return ""
	}
	line := "final pull request checks " + st.Outcome + " on " + short(st.Commit)
	if st.Outcome != backlog.ChecksPassed && st.Detail != "" {
		line += ": " + backlog.OneLine(st.Detail)
	}
	if st.URL != "" {
		line += " " + backlog.OneLine(st.URL)
	}
	return line
}

// finalChecksNeedHuman: the final PR's checks ended red or unfinished.
func (s *Supervisor) finalChecksNeedHuman() bool {
	st := s.run().FinalChecks
	return st != nil && st.Outcome != backlog.ChecksPassed
}
