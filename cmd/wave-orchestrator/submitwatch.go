package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// newSubmitWatchCmd is the watcher `submit` starts in the launcher
// session: it runs the lane's queued runs one at a time, each as a child
// launcher, and restarts a launcher that dies by a signal once.
func newSubmitWatchCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:    "submit-watch",
		Short:  "Run the lane's submitted runs (started by submit; not for direct use)",
		Hidden: true,
		Example: `  # started by submit in the lane's launcher session:
  wave-orchestrator --repo-root /src/app --lane main submit-watch`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openLane(g)
			if err != nil {
				return err
			}
			bin, err := self()
			if err != nil {
				return err
			}
			return watchSubmitted(c.Context(), submittedOf(e), bin, e.lane.RepoRoot, e.lane.Name, c.OutOrStdout())
		},
	}
}

// watchSubmitted holds the watcher lock and runs queued runs until none is
// left. It gives the lock up under the queue lock, so a submit either
// sees it held (and its run is picked here) or starts a new watcher.
func watchSubmitted(ctx context.Context, s submitted, bin, root, lane string, out io.Writer) error {
	if err := jsonfile.MkdirAll(s.store.dir); err != nil {
		return err
	}
	wl := flock.New(s.watcher)
	if ok, err := wl.TryLock(); err != nil || !ok {
		return err // another watcher runs the queue
	}
	defer wl.Unlock()
	failOrphans(s.store, out)
	for {
		unlock, err := s.lockQueue(ctx)
		if err != nil {
			return err
		}
		r := s.store.next()
		if r == nil {
			_ = wl.Unlock()
			unlock()
			return nil
		}
		now := time.Now().UTC()
		r.State, r.StartedAt = runRunning, &now
		err = s.store.write(r)
		unlock()
		if err != nil {
			return err
		}
		superviseRun(ctx, s.store, r, bin, root, lane, out)
	}
}

// superviseRun runs r's launcher; one killed by a signal is started once
// more with the same command line (launch and resume adopt the agents
// still running), a second such death fails the run.
func superviseRun(ctx context.Context, st runStore, r *submittedRun, bin, root, lane string, out io.Writer) {
	argv := append([]string{"--repo-root", root, "--lane", lane, r.Command}, r.Args...)
	for {
		code, sig, why := runLauncher(ctx, st, r, bin, argv, out)
		if sig == 0 || ctx.Err() != nil {
			if ctx.Err() != nil && sig != 0 {
				why = "watcher interrupted: " + ctx.Err().Error()
			}
			r.finish(code, why)
			break
		}
		if r.Restarts >= 1 {
			r.finish(128+int(sig), fmt.Sprintf("launcher died twice (last: pid %d killed by %s); not restarted again", r.Pid, sig))
			break
		}
		r.Restarts++
		r.Why = fmt.Sprintf("launcher pid %d killed by %s; restarted once, adopting its live agents", r.Pid, sig)
		fmt.Fprintln(out, "watcher:", r.Why)
	}
	if err := st.write(r); err != nil {
		fmt.Fprintln(out, "watcher:", err)
	}
}

// runLauncher starts one launcher, records its pid and waits for it. The
// launcher's output goes to this pane; the last line of its stderr is the
// why of a failure.
func runLauncher(ctx context.Context, st runStore, r *submittedRun, bin string, argv []string, out io.Writer) (code int, sig syscall.Signal, why string) {
	cmd := exec.Command(bin, argv...)
	tail := &tailBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, io.MultiWriter(out, tail)
	if err := cmd.Start(); err != nil {
		return exitcode.Failed, 0, "launcher not started: " + err.Error()
	}
	r.Pid = cmd.Process.Pid
	if err := st.write(r); err != nil {
		fmt.Fprintln(out, "watcher:", err)
	}
	// A watcher told to stop passes it on; the launcher ends its wave.
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
	defer stop()
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return -1, ws.Signal(), ""
		}
		return ee.ExitCode(), 0, tail.lastLine()
	}
	if err != nil {
		return exitcode.Failed, 0, err.Error()
	}
	return 0, 0, ""
}

// tailBuffer keeps the last bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2*t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := bytes.TrimRight(t.b, "\r\n\t ")
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}

// failOrphans ends the runs a dead watcher left running: only a watcher
// holding the lock writes running, so none is live now.
func failOrphans(st runStore, out io.Writer) {
	recs, _ := st.list()
	for _, r := range recs {
		if r.State == runRunning {
			r.finish(exitcode.Failed, fmt.Sprintf("its watcher died while launcher pid %d ran; resubmit to adopt the live agents", r.Pid))
			if err := st.write(r); err != nil {
				fmt.Fprintln(out, "watcher:", err)
			}
		}
	}
}
