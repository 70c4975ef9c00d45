package drive

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// startWaitChange starts `status --wait-change --exit-code` and returns
// once it watches (its stderr says so); done gets its exit code.
func startWaitChange(t *testing.T, r *e2etest.Repo, extra ...string) (done chan int) {
	t.Helper()
	cmd := r.Command(e2etest.Context(t), append([]string{"status", "--wait-change", "--exit-code"}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() || !strings.Contains(sc.Text(), "waiting for the lane's state to change") {
		t.Fatalf("status --wait-change did not start watching: %q", sc.Text())
	}
	done = make(chan int, 1)
	go func() {
		for sc.Scan() {
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			done <- ee.ExitCode()
			return
		}
		done <- 0
	}()
	return done
}

// An agent asking a person a question wakes `status --wait-change
// --exit-code` with 20 (input required).
func TestStatusWaitChangeExitsTwentyWhenAnAgentAsksAQuestion(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	if res := r.Run(e2etest.Context(t), "status", "--exit-code"); res.Code != e2etest.StatusCompleted {
		t.Fatalf("status --exit-code of a completed lane: %d", res.Code)
	}
	done := startWaitChange(t, r, "--timeout-seconds", "100")
	post := r.Run(e2etest.Context(t), "coord", "post", "--lane", "main", "--wave", "0", "--agent", "A1", "--kind", "human-feedback",
		"--summary", "which database should A1 target?")
	if post.Code != 0 {
		t.Fatalf("post: %d %s", post.Code, post.Stderr)
	}
	if code := <-done; code != e2etest.StatusInputRequired {
		t.Fatalf("status --wait-change --exit-code: %d, want 20", code)
	}
}

// The README's human loop, line 2, when the agent asked before it ran:
// `status --wait-change --exit-code` returns 20 at once instead of
// waiting for a change that only the answer would bring. The deadline is
// the test's: without the fix the command waits until it is killed.
func TestStatusWaitChangeReturnsAtOnceWhenInputIsAlreadyRequired(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	if res := e2etest.Launch(t, r); res.Code != 0 {
		t.Fatalf("launch: %d %s", res.Code, res.Stderr)
	}
	e2etest.PostRecord(t, r, "--agent", "A1", "--kind", "human-feedback", "--summary", "which database should A1 target?")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := r.Run(ctx, "status", "--wait-change", "--exit-code")
	if ctx.Err() != nil {
		t.Fatal("status --wait-change --exit-code waited although input was already required")
	}
	if res.Code != e2etest.StatusInputRequired {
		t.Fatalf("status --wait-change --exit-code: exit %d, want 20\n%s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "status: input is required already (`questions --pending`); not waiting") {
		t.Errorf("status does not say why it did not wait:\n%s", res.Stderr)
	}
}
