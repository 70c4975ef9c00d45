package supervisor

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// A GitHub rate-limit wait in the look for answers holds only that look:
// while it waits (here until the test lets it go), another worker's exit
// is seen and its issue merged. The loop used to wait behind it.
func TestAGitHubRateLimitWaitNeverHoldsTheLoop(t *testing.T) {
	t.Parallel()
	g := newGHFixture(t)
	held, entered := make(chan struct{}), make(chan struct{}, 1)
	g.newSource = func() forge.Source {
		o := g.srv.Options()
		o.Logger = slog.New(slog.NewTextHandler(g.logs, nil))
		o.Sleep = func(ctx context.Context, d time.Duration) error {
			select {
			case entered <- struct{}{}:
			default:
			}
			select {
			case <-held:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		src, err := forge.NewGitHub(o)
		if err != nil {
			t.Fatal(err)
		}
		return src
	}
	g.ghIssue(1, "Asks", "Files: a/**")
	g.ghIssue(2, "Works", "Files: b/**")
	gate := g.shellWorkers(`set -e
n=$WAVE_ISSUE_NUMBER
if [ "$n" = 1 ]; then echo '[backlog-result] state=needs-input question="Which way?"'; exit 0; fi
i=0; until [ -e "$GATE/go" ]; do i=$((i+1)); [ $i -gt 2400 ] && exit 1; sleep 0.05; done
echo work > own.txt && gitc add own.txt && gitc commit -q -m "Work"
echo "[backlog-result] state=done detail=worked"
`)
	or := g.startRun(t, fastAnswers, 1, 2)
	or.until(t, g.fixture, "#1 to ask", func(ev backlog.Event) bool { return ev.Kind == backlog.EvNeedsInput && ev.Issue == 1 })
	// The next request (a look for #1's answer) hits the primary limit,
	// half an hour away: the client waits in Sleep until released.
	g.srv.RateLimitNext(true, time.Now().Add(30*time.Minute))
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatal("no request waited out the rate limit")
	}
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	or.until(t, g.fixture, "#2 merged during the wait", func(ev backlog.Event) bool { return ev.Kind == backlog.EvMerged && ev.Issue == 2 })
	close(held)
	res := or.end(t)
	if res.err != nil || res.ExitCode != exitcode.NeedsHuman {
		t.Fatalf("exit %d, %v; want 43 (#1's question open)\n%s", res.ExitCode, res.err, res.out)
	}
}
