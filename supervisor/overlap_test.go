package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// heldStarts makes f's claim command hold the start of every issue in
// held at a fifo until the test lets it go: the command says it began
// (in-<n>), then reads its issue's fifo. Others pass at once.
type heldStarts struct {
	dir   string
	gates map[int]*os.File
}

func holdStarts(t *testing.T, f *fixture, held ...int) *heldStarts {
	t.Helper()
	h := &heldStarts{dir: t.TempDir(), gates: map[int]*os.File{}}
	cond := "false"
	for _, n := range held {
		if err := syscall.Mkfifo(filepath.Join(h.dir, "gate-"+strconv.Itoa(n)), 0o600); err != nil {
			t.Fatal(err)
		}
		cond += ` || [ "$1" = ` + strconv.Itoa(n) + ` ]`
	}
	script := filepath.Join(h.dir, "hook.sh")
	body := "touch \"" + h.dir + "/in-$1\"\nif " + cond + "; then read x < \"" + h.dir + "/gate-$1\"; fi\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	f.config = baseConfig + "  claim:\n    command: [sh, \"" + script + "\", \"{issue}\"]\n"
	// Whatever the test did, no hook is left holding a run.
	t.Cleanup(func() {
		for _, n := range held {
			h.release(t, n)
		}
		for _, g := range h.gates {
			g.Close()
		}
	})
	return h
}

// began: issue n's claim command is running (or ran).
func (h *heldStarts) began(n int) bool {
	_, err := os.Stat(filepath.Join(h.dir, "in-"+strconv.Itoa(n)))
	return err == nil
}

// release lets issue n's start go on. The fifo is opened read-write, so
// this never blocks, and kept open until the test ends, so the line
// waits in it for a reader that has not opened it yet.
func (h *heldStarts) release(t *testing.T, n int) {
	if h.gates[n] != nil {
		return
	}
	g, err := os.OpenFile(filepath.Join(h.dir, "gate-"+strconv.Itoa(n)), os.O_RDWR, 0)
	if err != nil {
		t.Error(err)
		return
	}
	h.gates[n] = g
	if _, err := g.WriteString("go\n"); err != nil {
		t.Error(err)
	}
}

// runInBackground supervises issues until the end; the result arrives on
// the channel. The run is stopped (as a crash) if the test ends first.
func runInBackground(t *testing.T, f *fixture, issues ...int) (<-chan result, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	out := &syncBuffer{}
	o := f.options(ctx, out, issues...)
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	done, ended := make(chan result, 1), make(chan struct{})
	go func() {
		defer close(ended)
		res, err := s.Run(ctx)
		done <- result{Result: res, out: out.String(), err: err}
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return done, out
}

// eventOf: the run's log (the newest run of f's lane) has an event of
// kind for issue n.
func eventOf(f *fixture, kind string, n int) bool {
	dirs, err := runlog.List(f.layout().StateDir)
	if err != nil || len(dirs) == 0 {
		return false
	}
	evs, _, _ := readEvents(dirs[len(dirs)-1])
	for _, ev := range evs {
		if ev.Kind == kind && ev.Issue == n {
			return true
		}
	}
	return false
}

func mergedAllOf(t *testing.T, done <-chan result, issues ...int) {
	t.Helper()
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
	r, _, err := runlog.Read(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range issues {
		if is := r.Issues[n]; is == nil || is.State != backlog.StateMerged {
			t.Errorf("#%d: %+v, want merged\n%s", n, is, res.out)
		}
	}
}

// A worker that finishes is seen finished (and merged) while another
// issue's start is still under way: one slow start (a claim command, a
// slow fetch, a worktree on a busy disk) never blinds the loop to the
// workers it already runs.
func TestWorkerExitIsSeenWhileAnotherWorkerIsStillStarting(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "Quick", "Files: a/**")
	f.issue(2, "Slow to start", "Files: b/**")
	h := holdStarts(t, f, 2)
	done, out := runInBackground(t, f, 1, 2)
	waitFor(t, "#1 merged while #2 is still starting", func() bool { return eventOf(f, backlog.EvMerged, 1) })
	if !h.began(2) || eventOf(f, backlog.EvWorkerStarted, 2) {
		t.Fatalf("#2 should still be in its claim command (began %v)\n%s", h.began(2), out.String())
	}
	h.release(t, 2)
	mergedAllOf(t, done, 1, 2)
}

// Two issues start at once: the second's claim command runs while the
// first's is still running.
func TestWorkerStartsOverlap(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "One", "Files: a/**")
	f.issue(2, "Two", "Files: b/**")
	h := holdStarts(t, f, 1, 2)
	done, out := runInBackground(t, f, 1, 2)
	waitFor(t, "both starts under way at once", func() bool { return h.began(1) && h.began(2) })
	if s := out.String(); strings.Contains(s, "worker started") {
		t.Fatalf("a worker started while both claim commands are held:\n%s", s)
	}
	h.release(t, 1)
	h.release(t, 2)
	mergedAllOf(t, done, 1, 2)
}

// A supervisor killed while as many starts as its width were under way
// (each claimed, none started) leaves every slot held by a claimed
// issue: the next one starts them all rather than wait for a free slot
// that only they can free.
func TestResumeStartsClaimedIssuesThatHoldEverySlot(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for n := 1; n <= 3; n++ {
		f.issue(n, "Issue "+strconv.Itoa(n), "Files: p"+strconv.Itoa(n)+"/**")
	}
	id := "20261201T090000Z-t-abc123"
	dir := filepath.Join(runlog.Root(f.layout().StateDir), id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, _, err := openRunLog(dir, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	info := backlog.RunInfo{ID: id, Lane: "main", Source: "local", WaveBranch: "wave/2026-12-01-t", Base: "main",
		Default: "main", Bounded: []int{1, 2, 3}, Width: 2, Host: "h", Pid: 1, StartedAt: time.Now()}
	plan := backlog.Plan{Width: 2, Order: []int{1, 2, 3}, Groups: []backlog.Group{{Issues: []int{1}}, {Issues: []int{2}}, {Issues: []int{3}}}}
	evs := []backlog.Event{{Kind: backlog.EvRunStarted, Run: &info}, {Kind: backlog.EvPlanned, Plan: &plan}}
	for n := 1; n <= 3; n++ {
		evs = append(evs, backlog.Event{Kind: backlog.EvIssue, Issue: n, Title: "Issue " + strconv.Itoa(n), Group: n})
	}
	evs = append(evs, backlog.Event{Kind: backlog.EvClaimed, Issue: 1}, backlog.Event{Kind: backlog.EvClaimed, Issue: 2})
	for _, ev := range evs {
		if err := l.emit(ev); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := f.runCtx(ctx, func(o *Options) { o.Width = 2 })
	if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 3 {
		t.Fatalf("resume: exit %d, tally %+v, %v", res.ExitCode, res.Tally, res.err)
	}
}
