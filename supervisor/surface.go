package supervisor

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// surfacePark reports whether backlog.surfacePolicy parks a change that
// leaves its declared surface (the default, warn, merges it and says so).
func (s *Supervisor) surfacePark() bool { return s.o.Config.Backlog.SurfacePolicy == "park" }

// parkOutside parks j's ready issue, before any write about its merge,
// when surfacePolicy is park and its worker changed files outside the
// issue's declared surface; the files go into the park event (and so
// into status and the final PR) and into the question.
func (s *Supervisor) parkOutside(ctx context.Context, j *job) (bool, error) {
	is := j.w.is
	if !s.surfacePark() || len(is.Surface.Globs) == 0 || is.Branch == "" {
		return false, nil
	}
	files, err := s.o.Git.DiffNames(ctx, s.waveRef(), "refs/heads/"+is.Branch)
	if err != nil {
		return false, fmt.Errorf("#%d: files its worker changed: %w", is.Number, err)
	}
	outside := backlog.Outside(is.Surface, files)
	if len(outside) == 0 {
		return false, nil
	}
	n := is.Number
	detail := fmt.Sprintf("changed %s outside its declared surface (backlog.surfacePolicy: park)", fileList(outside))
	question := fmt.Sprintf("#%d's worker changed files its Files: list does not name. Add them to the issue's Files: list, or narrow the change on %s, and run again?", n, is.Branch)
	if err := s.comment(ctx, j, "parked", backlog.ParkedComment(s.run().Info.ID, detail, question, nil)); err != nil {
		return true, err
	}
	if err := j.record(backlog.Event{Kind: backlog.EvParked, Issue: n, Detail: detail, Question: question, Outside: outside}); err != nil {
		return true, err
	}
	s.printf("#%d parked: %s", n, oneLine(detail))
	j.onLoop(func() { s.checkpoint("parked") })
	return true, nil
}

// surfaceWarn reports the files merged worker w changed outside its
// declared surface (already recorded with the merge), naming the work in
// flight whose surface they fall in; the merge train already serialised
// the merges, and later planning sees the change on the wave branch. On
// the loop.
func (s *Supervisor) surfaceWarn(w *worker, outside []string) {
	is := w.is
	if len(outside) == 0 {
		return
	}
	touched := map[int]bool{}
	for _, f := range outside {
		probe := backlog.Surface{Globs: []string{f}}
		for _, o := range s.run().List() {
			if o.Number == is.Number || backlog.Terminal(o.State) || len(o.Surface.Globs) == 0 {
				continue
			}
			if hit, _ := backlog.Collide(probe, backlog.Surface{Globs: o.Surface.Globs}, false); hit {
				touched[o.Number] = true
			}
		}
	}
	d := fmt.Sprintf("changed %s outside its declared surface (listed in the final PR)", fileList(outside))
	if len(touched) > 0 {
		var ns []string
		for _, o := range s.run().List() {
			if touched[o.Number] {
				ns = append(ns, "#"+strconv.Itoa(o.Number))
			}
		}
		d += ", in the surface of work in flight (" + strings.Join(ns, " ") + ")"
	}
	s.printf("warning: #%d %s", is.Number, d)
	_ = s.emit(backlog.Event{Kind: backlog.EvSurfaceOverlap, Issue: is.Number, Files: outside, Detail: d})
}

// fileList is the names of files a worker committed, for one line: a
// name is the worker's to choose, newlines included, and must not start
// a line of the run's output of its own.
func fileList(files []string) string {
	return strings.NewReplacer("\n", " ", "\t", " ").Replace(backlog.Clean(strings.Join(files, ", ")))
}
