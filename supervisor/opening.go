package supervisor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// stagingPrefix names a run directory being created: it becomes the run's
// directory by one rename once its first events are written, so a lane
// never holds a run directory without a run in it.
const stagingPrefix = ".new-"

// createRunDir makes root/<id> holding evs as its first events.
// Leftovers of a creation killed halfway are removed first (the caller
// holds the lane, so none is in progress).
func createRunDir(root, id string, now time.Time, evs []backlog.Event) (string, error) {
	if err := jsonfile.MkdirAll(root); err != nil {
		return "", fmt.Errorf("backlog runs dir: %w", err)
	}
	stale, _ := filepath.Glob(filepath.Join(root, stagingPrefix+"*"))
	for _, d := range stale {
		_ = os.RemoveAll(d)
	}
	tmp, dir := filepath.Join(root, stagingPrefix+id), filepath.Join(root, id)
	for _, ev := range evs {
		ev.At = now
		if err := jsonfile.Append(filepath.Join(tmp, runlog.EventsFile), ev); err != nil {
			return "", fmt.Errorf("backlog run dir %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("backlog run dir %s: %w", dir, err)
	}
	if d, err := os.Open(root); err == nil {
		_ = d.Sync() // the rename survives a power cut
		d.Close()
	}
	return dir, nil
}

// cutWaveBranch puts the run's wave branch on origin, cut from
// origin/<base>, under a name no other run has. Each candidate name is
// recorded (with the commit that reserves it) before anything is pushed:
// the name is reserved on origin, then the branch created. A name taken
// by another run moves this one to the next suffix, recorded likewise. So
// a supervisor killed at any point of this resumes with the same name.
func (s *Supervisor) cutWaveBranch(ctx context.Context) error {
	for {
		r := s.run()
		w, name := r.Wave, r.Info.WaveBranch
		held, fresh, err := s.o.Git.ReserveWaveName(ctx, name, w.Reservation)
		if err != nil {
			return fmt.Errorf("wave branch %s: %w", name, err)
		}
		if held {
			tip, created, err := s.o.Git.EnsureWaveBranch(ctx, name, r.Info.Base)
			if err != nil {
				return fmt.Errorf("wave branch %s from %s: %w", name, r.Info.Base, err)
			}
			// Not fresh: this run reserved the name before a restart, so
			// a branch of that name is the one it cut then.
			if created || !fresh {
				if err := s.emit(backlog.Event{Kind: backlog.EvWaveBranch, Outcome: backlog.WaveCut, Tip: tip}); err != nil {
					return err
				}
				s.freeWaveName(ctx)
				return nil
			}
			// Reserved just now, yet the branch is there: made by someone
			// who does not reserve names (an older version, a person).
			s.freeWaveName(ctx)
		}
		if w.Attempt >= 99 {
			return fmt.Errorf("wave branch %s: no free name after 99 tries", name)
		}
		next := nextWaveName(name, w.Attempt)
		resv, err := s.o.Git.WaveNameCommit(ctx, next, r.Info.ID)
		if err != nil {
			return err
		}
		if err := s.emit(backlog.Event{Kind: backlog.EvWaveBranch, Branch: next, Ref: resv, Attempt: w.Attempt + 1,
			Outcome: backlog.WaveCutting}); err != nil {
			return err
		}
	}
}

// nextWaveName is the candidate after name, the attempt-th one (wave,
// wave-2, wave-3, ...).
func nextWaveName(name string, attempt int) string {
	first := name
	if attempt > 1 {
		first = strings.TrimSuffix(name, fmt.Sprintf("-%d", attempt))
	}
	return fmt.Sprintf("%s-%d", first, attempt+1)
}

// freeWaveName removes the run's reservation of its wave branch name once
// it is no longer needed (the branch is cut, or the name was not ours).
// Failing is harmless: a reservation left behind only makes a later run
// of the same name take the next suffix.
func (s *Supervisor) freeWaveName(ctx context.Context) {
	w := s.run().Wave
	if w == nil || w.Reservation == "" {
		return
	}
	if err := s.o.Git.FreeWaveName(ctx, s.run().Info.WaveBranch, w.Reservation); err != nil {
		s.printf("warning: %s", oneLine(err.Error()))
	}
}

// sweepScratch removes the verify worktrees a supervisor killed during
// verify left registered.
func (s *Supervisor) sweepScratch(ctx context.Context) {
	n, err := s.o.Git.RemoveStaleScratch(ctx, processAlive)
	if err != nil {
		s.printf("warning: %s", oneLine(err.Error()))
	}
	if n > 0 {
		s.printf("removed %d verify worktree(s) left by a supervisor that was killed", n)
	}
}
