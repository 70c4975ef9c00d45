package supervisor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
)

// A worker that keeps printing is not looked at with git: the output its
// runner records says it is alive. The supervisor used to run two git
// commands per worker on every sweep to time silence.
func TestPrintingWorkerIsNotLookedAtWithGit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.config = strings.Replace(baseConfig, "silenceSeconds: 30", "silenceSeconds: 4", 1)
	f.issue(1, "Chatty", "Files: a/**")
	gate := f.shellWorkers(`set -e
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
i=0; until [ -e "$GATE/go" ]; do i=$((i+1)); [ $i -gt 2400 ] && exit 1; echo "line $i"; sleep 0.05; done
echo "[backlog-result] state=done detail=chatty"
`)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := &syncBuffer{}
	o := f.options(ctx, out, 1)
	repo := o.Git
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.Run(ctx)
		done <- result{Result: res, out: out.String(), err: err}
	}()
	printed := func(line string) func() bool {
		return func() bool {
			dirs, _ := filepath.Glob(filepath.Join(runlog.Root(f.layout().StateDir), "*", "runs", "i1-a1", lanes.LogFile))
			for _, d := range dirs {
				// A pty ends its lines with \r\n.
				if b, _ := os.ReadFile(d); strings.Contains(string(b), line+"\r\n") || strings.Contains(string(b), line+"\n") {
					return true
				}
			}
			return false
		}
	}
	waitFor(t, "the worker printing", printed("line 5"))
	before := repo.Calls()
	// Two seconds of output at least: past a quarter of the limit, about
	// ten sweeps at the test's tick.
	waitFor(t, "two seconds of output", printed("line 45"))
	if n := repo.Calls() - before; n > 1 { // one look at the claims may fall in it
		t.Errorf("%d git commands while the worker printed, want none", n)
	}
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("exit %d, %v\n%s", res.ExitCode, res.err, res.out)
	}
	r, _, _ := runlog.Read(res.Dir)
	if is := r.Issues[1]; is.State != backlog.StateMerged {
		t.Errorf("#1 %s, want merged", is.State)
	}
}
