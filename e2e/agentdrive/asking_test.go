package agentdrive

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// The wave these tests drive: A1 asks a person a blocking question and
// finishes; started again with the answer, it does its work. (e2e/human
// has the same fixture; the two can share one in e2etest.)

const askedQuestion = "Which database should A1 target?"

func askingWave(r *e2etest.Repo) {
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "local.ask: "+askedQuestion), e2etest.ImplAgent("A2")}, e2etest.ClosureAgents()...)...)
}

// bgLaunch is a launcher started in the background, its console in a file.
type bgLaunch struct {
	cmd *exec.Cmd
	out string
}

func startLaunch(t *testing.T, r *e2etest.Repo) *bgLaunch {
	t.Helper()
	out := filepath.Join(t.TempDir(), "launch.out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd := r.Command(e2etest.Context(t), "launch", "--lane", "main", "--no-dashboard")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &bgLaunch{cmd: cmd, out: out}
}

func (b *bgLaunch) console() string {
	s, _ := os.ReadFile(b.out)
	return string(s)
}

// wait is the launcher's exit code.
func (b *bgLaunch) wait(t *testing.T) int {
	t.Helper()
	err := b.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// pendingQuestion waits until the lane has exactly one pending question
// and a launcher that printed it is waiting for it.
func pendingQuestion(t *testing.T, r *e2etest.Repo, l *bgLaunch) questions.Question {
	t.Helper()
	var q questions.Question
	e2etest.WaitFor(t, "the launcher waiting for an answer", time.Minute, func() bool {
		qs, _, err := questions.List(r.Layout())
		if err != nil || len(qs) != 1 || qs[0].State != questions.Pending {
			return false
		}
		q = qs[0]
		return strings.Contains(l.console(), "waiting for input: A1 asked "+q.ID)
	})
	return q
}

// answerReachedA1 checks that A1 was started again once, for the answer,
// with the question and the answer in its newest prompt.
func answerReachedA1(t *testing.T, r *e2etest.Repo, q questions.Question, answer string) {
	t.Helper()
	l := r.Layout()
	k := 1
	for ; ; k++ {
		if _, err := os.Stat(l.RunDir(0, "A1", k+1)); err != nil {
			break
		}
	}
	prompt, err := os.ReadFile(filepath.Join(l.RunDir(0, "A1", k), lanes.PromptFile))
	if err != nil {
		t.Fatal(err)
	}
	p := string(prompt)
	i := strings.Index(p, "\n"+questions.HeadAnswers+"\n")
	if k != 2 || i < 0 || !strings.Contains(p[i:], askedQuestion) || !strings.Contains(p[i:], answer) || !strings.Contains(p[i:], q.ID) {
		t.Fatalf("A1's run %d: want its second run's prompt to hold the question and the answer under %q:\n%s", k, questions.HeadAnswers, p)
	}
	relaunches := 0
	for _, ev := range r.Events() {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" && ev.Data["relaunchedFor"] == "answer" {
			relaunches++
		}
	}
	if relaunches != 1 {
		t.Fatalf("%d relaunches for the answer, want 1", relaunches)
	}
}
