package supervisor

import (
	"context"
	"errors"
	"fmt"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
)

// Planning: which issues of the backlog the run takes, in which groups,
// and what it tells the planner (what it holds already, what other runs
// claimed).

// plan lists the candidates, plans them and records every issue taken
// (with its group) and every one skipped.
func (s *Supervisor) plan(ctx context.Context) error {
	issues, err := s.candidates(ctx)
	if err != nil {
		return err
	}
	opts := s.planOptions(ctx)
	p := backlog.MakePlan(issues, opts)
	keepQuestions(ctx, s.o.Layout.StateDir, s.o.Source, &p)
	s.plannedAt, s.replan = s.o.Now(), false
	if err := s.emit(backlog.Event{Kind: backlog.EvPlanned, Plan: &p}); err != nil {
		return err
	}
	if len(p.Groups) > 0 {
		s.printf("plan: %d issue(s) in %d group(s) by conflict surface, %d worker(s) at once", len(p.Order), len(p.Groups), min(p.Width, s.o.Width))
	}
	bounded := len(s.run().Info.Bounded) > 0
	groups := p.Groups
	if free := s.o.Width - s.busy(); !bounded && len(groups) > free {
		groups = groups[:max(free, 0)]
	}
	taken := len(groups)
	if err := s.take(ctx, groups); err != nil {
		return err
	}
	for _, q := range p.NeedsInput {
		if _, in := s.run().Issues[q.Issue]; !in {
			s.printf("needs input: #%d %s", q.Issue, oneLine(q.Question))
		}
	}
	for _, sk := range p.Skipped {
		if bounded || sk.Reason != backlog.ReasonDone {
			s.printf("skipped #%d: %s %s", sk.Issue, sk.Reason, oneLine(sk.Detail))
		}
	}
	if !bounded && taken == 0 && s.busy() == 0 {
		s.drained = true
		s.printf("backlog drained: nothing eligible left")
	}
	s.checkpoint("planned")
	return nil
}

// take records the issues of groups as entering the run, each once: the
// planned event comes first, so a supervisor killed halfway through this
// finds the bounded plan's rest on restart (refill calls take again).
func (s *Supervisor) take(ctx context.Context, groups []backlog.Group) error {
	dropped := map[int]bool{}
	for _, d := range s.run().Dropped {
		dropped[d.Issue] = true
	}
	for _, g := range groups {
		for _, n := range g.Issues {
			if _, in := s.run().Issues[n]; in || dropped[n] {
				continue
			}
			is, err := s.issue(ctx, s.inline(nil), n)
			if err != nil {
				return err
			}
			sf := backlog.ParseSurface(is.Body, is.Labels)
			if err := s.emit(backlog.Event{Kind: backlog.EvIssue, Issue: n, Title: backlog.Clean(is.Title), Surface: &sf, Group: g.Issues[0], Labels: cleanLabels(is.Labels)}); err != nil {
				return err
			}
		}
	}
	return nil
}

// candidates: every open issue (with the required labels), plus each
// bounded issue that is not open, so the planner can say why it is not run.
func (s *Supervisor) candidates(ctx context.Context) ([]backlog.Issue, error) {
	open, err := listOpen(ctx, s.o.Source, s.o.Labels, func(w string) { s.printf("warning: %s", w) })
	if err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	for _, is := range open {
		s.issues[is.Number], seen[is.Number] = is, true
	}
	for _, n := range s.run().Info.Bounded {
		if seen[n] {
			continue
		}
		is, err := s.o.Source.Get(ctx, n)
		if err != nil {
			continue // reported by the planner as missing
		}
		s.issues[n] = is
		open = append(open, is)
	}
	return open, nil
}

func (s *Supervisor) planOptions(ctx context.Context) backlog.PlanOptions {
	r := s.run()
	opts := backlog.PlanOptions{Issues: r.Info.Bounded, Width: s.o.Width, Labels: s.o.Labels,
		NeedsInputLabel:    s.o.Config.Backlog.NeedsInputLabel,
		UndeclaredParallel: s.o.Config.Backlog.UndeclaredSurface == "parallel",
		Claimed:            map[int]string{}, Done: map[int]bool{}}
	if len(r.Info.Bounded) == 0 && s.o.MaxIssues > 0 {
		opts.MaxIssues = s.o.MaxIssues - len(r.Issues) - len(r.Dropped)
	}
	for n, is := range r.Issues {
		opts.Done[n] = true
		if !backlog.Terminal(is.State) {
			opts.InFlight = append(opts.InFlight, backlog.InFlight{Issue: n, Surface: is.Surface})
		}
	}
	for _, d := range r.Dropped {
		opts.Done[d.Issue] = true
	}
	// ListClaims returns the claims that parse even when some do not:
	// one malformed ref must not switch claim filtering off.
	claims, err := s.o.Git.ListClaims(ctx)
	if err != nil {
		s.printf("warning: %s", oneLine(err.Error()))
	}
	for _, c := range claims {
		if c.RunID != r.Info.ID {
			opts.Claimed[c.Issue] = fmt.Sprintf("run %s on %s", oneLine(c.RunID), oneLine(c.Host))
		}
	}
	return opts
}

// listOpen lists open issues. Unreadable local issue files are a warning
// naming each file: one bad file must not hide the rest of the backlog.
func listOpen(ctx context.Context, src forge.Source, labels []string, warn func(string)) ([]backlog.Issue, error) {
	open, err := src.ListOpen(ctx, labels)
	var bad *forge.BadIssueFiles
	if errors.As(err, &bad) {
		for _, f := range bad.Files {
			warn(oneLine(f.Error()))
		}
		err = nil
	}
	if err != nil {
		return nil, fmt.Errorf("list issues: %w", err)
	}
	return open, nil
}

// cleanLabels are an issue's labels as recorded in the run's log (the
// outcome ledger groups by them), each one line of plain text.
func cleanLabels(ls []string) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, backlog.Clean(l))
	}
	return out
}
