package supervisor

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// writeOnce makes one external write idempotently across crashes: the
// intent is recorded first; a write already done in this run (by this
// process or one before it) is not made again; and every write is itself
// a look-then-act on a marker (comment marker, PR head, label, ref) so an
// intent recorded but interrupted is safe to redo. It returns the pull
// request the write opened (zero for every other write). In j, or on
// the loop with s.inline.
func (s *Supervisor) writeOnce(ctx context.Context, j *job, in backlog.Intent) (backlog.PRRef, error) {
	var pr backlog.PRRef
	var done bool
	var err error
	j.onLoop(func() {
		if pr, done = s.run().Done[in.ID]; done {
			return
		}
		if _, pending := s.run().Intents[in.ID]; !pending {
			err = s.emit(backlog.Event{Kind: backlog.EvIntent, Issue: in.Issue, Intent: &in})
		}
	})
	if done || err != nil {
		return pr, err
	}
	pr, err = s.carryOut(ctx, in)
	if err != nil {
		return backlog.PRRef{}, fmt.Errorf("%s (#%d): %w", in.ID, in.Issue, err)
	}
	return pr, j.record(backlog.Event{Kind: backlog.EvIntentDone, Issue: in.Issue, Intent: &backlog.Intent{ID: in.ID},
		URL: pr.URL, Number: pr.Number})
}

// done: the write (or hook) id was made in this run.
func (s *Supervisor) done(j *job, id string) bool {
	var ok bool
	j.onLoop(func() { _, ok = s.run().Done[id] })
	return ok
}

// writeAgain makes an idempotent write even when this run made it before
// (the final PR: its body must say what the run did in the end).
func (s *Supervisor) writeAgain(ctx context.Context, j *job, in backlog.Intent) (backlog.PRRef, error) {
	j.onLoop(func() { delete(s.run().Done, in.ID) })
	return s.writeOnce(ctx, j, in)
}

// carryOut makes the write in names, without recording it: the pull
// request it opened, if it opened one.
func (s *Supervisor) carryOut(ctx context.Context, in backlog.Intent) (backlog.PRRef, error) {
	if in.Op == backlog.OpPR {
		pr, err := s.o.Source.EnsurePR(ctx, in.Head, in.Base, in.Title, in.Body)
		if err != nil {
			return backlog.PRRef{}, err
		}
		return backlog.PRRef{Number: pr.Number, URL: pr.URL}, nil
	}
	return backlog.PRRef{}, s.write(ctx, in)
}

// write is carryOut for the writes that produce nothing to keep.
func (s *Supervisor) write(ctx context.Context, in backlog.Intent) error {
	src := s.o.Source
	switch in.Op {
	case backlog.OpLabel:
		return src.AddLabel(ctx, in.Issue, in.Label)
	case backlog.OpUnlabel:
		return src.RemoveLabel(ctx, in.Issue, in.Label)
	case backlog.OpComment:
		_, err := src.EnsureComment(ctx, in.Issue, in.Marker, in.Body)
		return err
	case backlog.OpPush:
		return s.o.Git.PushReplacing(ctx, "refs/heads/"+in.Head, in.Head)
	case backlog.OpClosePR:
		return src.ClosePR(ctx, in.PR, in.Marker, in.Body)
	case backlog.OpClose:
		return src.CloseIssue(ctx, in.Issue)
	case backlog.OpRelease:
		err := s.o.Git.Release(ctx, in.Issue, in.SHA)
		if errors.Is(err, gitops.ErrRejected) {
			// The ref moved: another run holds the claim now. Ours is gone.
			s.printf("#%d: the claim is held by someone else now; nothing to release", in.Issue)
			return nil
		}
		return err
	}
	return fmt.Errorf("unknown intent op %q", in.Op)
}

// restartIntents redoes the writes a previous supervisor recorded and did
// not finish (in id order; each is independent of the others).
func (s *Supervisor) restartIntents(ctx context.Context) error {
	ids := make([]string, 0, len(s.run().Intents))
	for id := range s.run().Intents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		in := s.run().Intents[id]
		s.printf("redoing an interrupted write: %s", id)
		if _, err := s.writeOnce(ctx, s.inline(nil), in); err != nil {
			// Never fatal here: one write that keeps failing must not
			// keep the whole run from resuming. It stays pending; the
			// step that wants it tries again and says why it fails.
			s.printf("warning: %v", err)
		}
	}
	return nil
}

// marker is the hidden marker a comment of this run about issue n carries.
func (s *Supervisor) marker(kind string, n int) string {
	return fmt.Sprintf("<!-- wave-orchestrator:%s run=%s issue=%d -->", kind, s.run().Info.ID, n)
}

// comment posts body on j's issue once per (kind, run).
func (s *Supervisor) comment(ctx context.Context, j *job, kind, body string) error {
	n := j.w.n
	m := s.marker(kind, n)
	_, err := s.writeOnce(ctx, j, backlog.Intent{ID: fmt.Sprintf("comment-%s-%d", kind, n), Op: backlog.OpComment, Issue: n,
		Marker: m, Body: body + "\n\n" + m})
	return err
}
