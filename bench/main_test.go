package bench

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/buildtest"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter/tmuxtest"
)

var (
	idleFor  = flag.Duration("idle", 30*time.Second, "BenchmarkIdleRuns: how long to watch the idle runs")
	idleProf = flag.String("idleprof", "", "BenchmarkIdleRuns: write a CPU profile of the watched window to this file")
)

// runnerBin is the wave-orchestrator binary built by TestMain; the test
// binary itself is the fake agent (`fake-agent <mode>`).
var runnerBin string

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "fake-agent" {
		os.Exit(fakeAgent(os.Args[2:]))
	}
	flag.Parse()
	os.Exit(run(m))
}

// fakeAgent modes:
//
//	stamp FILE    write the time (Unix ns) to FILE as the last act, exit 0
//	sleep         sleep until signalled
func fakeAgent(args []string) int {
	switch args[0] {
	case "stamp":
		os.WriteFile(args[1], []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
		return 0
	case "sleep":
		time.Sleep(24 * time.Hour)
		return 0
	}
	fmt.Fprintln(os.Stderr, "fake-agent: unknown mode", args)
	return 2
}

// run isolates tmux and builds the runner into the private tmux dir.
func run(m *testing.M) int {
	return tmuxtest.Run(m, func(dir string) error {
		runnerBin = filepath.Join(dir, "wave-orchestrator")
		return buildtest.Binary(runnerBin)
	})
}

var socketSeq atomic.Int64

// lane is one isolated tmux server and a backend whose runner is the real
// binary, with the launcher's default heartbeat interval.
type lane struct {
	tm   *tmuxadapter.Client
	b    *runtime.TmuxBackend
	root string
}

func newLane(b *testing.B) *lane {
	b.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("tmux not installed")
	}
	tm := tmuxadapter.New(fmt.Sprintf("wb%d-%d", os.Getpid(), socketSeq.Add(1)))
	b.Cleanup(func() { tm.KillServer(context.Background()) })
	return &lane{tm: tm, b: runtime.NewTmuxBackend(tm, runnerBin, discard()), root: b.TempDir()}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// payload is a run of argv named id.
func (l *lane) payload(id string, argv ...string) *runtime.Payload {
	return &runtime.Payload{
		RunID: "w1-" + id + "-a1", Lane: "main", WaveNumber: 1, Attempt: 1, AgentID: id, ExecutorID: "local",
		OrchestratorID: "bench", Argv: argv, RunDir: filepath.Join(l.root, id+"-a1"), SessionName: "w1-" + id,
		Cwd: l.root, HeartbeatIntervalMs: 2000, // the config default
	}
}

// watch starts a watcher over the lane, as the launcher does.
func (l *lane) watch(ctx context.Context) *runtime.Watcher {
	w := runtime.NewWatcher(discard(), runtime.WithBackend(l.b))
	go w.Run(ctx)
	return w
}

// addAll creates the run directories and watches them before Start, as
// the launcher does.
func addAll(b *testing.B, w *runtime.Watcher, ps []*runtime.Payload) {
	b.Helper()
	for _, p := range ps {
		if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
			b.Fatal(err)
		}
		w.Add(p.RunDir)
	}
}

// collect reads changes until every dir in want has a final one and
// returns when each was received.
func collect(ctx context.Context, w *runtime.Watcher, want map[string]bool) (map[string]time.Time, error) {
	got := map[string]time.Time{}
	for len(got) < len(want) {
		select {
		case c, ok := <-w.Changes():
			if !ok {
				return got, fmt.Errorf("watcher stopped with %d of %d runs final", len(got), len(want))
			}
			if want[c.RunDir] && c.Obs.Verdict.Done && got[c.RunDir].IsZero() {
				got[c.RunDir] = time.Now()
			}
		case <-ctx.Done():
			return got, fmt.Errorf("%d of %d runs final: %w", len(got), len(want), ctx.Err())
		}
	}
	return got, nil
}

// readStamp reads a Unix-ns time written by the fake agent.
func readStamp(path string) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return time.Unix(0, ns), nil
}
