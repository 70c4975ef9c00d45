package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// AskedQuestion is the question AskingWave's A1 asks.
const AskedQuestion = "Which database should A1 target?"

// AskingWave is wave 0 with A1 asking a person a blocking question until
// its prompt holds the answer, A2 needing nothing, and closure.
func AskingWave(r *Repo) {
	r.WriteWave(0, append([]Agent{ImplAgent("A1", "local.ask: "+AskedQuestion), ImplAgent("A2")}, ClosureAgents()...)...)
}

// BgLaunch is a launcher started in the background, its console in a file.
type BgLaunch struct {
	Cmd *exec.Cmd // the launcher process
	out string
}

// StartLaunch starts `launch --lane main --no-dashboard args…` in the
// background; it ends with the test's context.
func StartLaunch(t *testing.T, r *Repo, args ...string) *BgLaunch {
	t.Helper()
	out := filepath.Join(t.TempDir(), "launch.out")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd := r.Command(Context(t), append([]string{"launch", "--lane", "main", "--no-dashboard"}, args...)...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &BgLaunch{Cmd: cmd, out: out}
}

// Console is what the launcher printed so far.
func (b *BgLaunch) Console() string {
	s, _ := os.ReadFile(b.out)
	return string(s)
}

// Wait is the launcher's exit code.
func (b *BgLaunch) Wait(t *testing.T) int {
	t.Helper()
	err := b.Cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// PendingQuestion waits until the lane has exactly one pending question
// and a launcher that printed it is waiting for it.
func PendingQuestion(t *testing.T, r *Repo, l *BgLaunch) questions.Question {
	t.Helper()
	var q questions.Question
	WaitFor(t, "the launcher waiting for an answer", time.Minute, func() bool {
		qs, _, err := questions.List(r.Layout())
		if err != nil || len(qs) != 1 || qs[0].State != questions.Pending {
			return false
		}
		q = qs[0]
		return strings.Contains(l.Console(), "waiting for input: A1 asked "+q.ID)
	})
	return q
}

// QuestionEvents counts the lane's question events by "id action".
func QuestionEvents(evs []state.Event) map[string]int {
	out := map[string]int{}
	for _, ev := range evs {
		if ev.EntityType == state.EntityQuestion {
			out[ev.EntityID+" "+ev.Action]++
		}
	}
	return out
}

// CheckAnswerReachedA1 checks the run after the answer: A1's newest
// prompt holds the question and the answer under "Answers from people",
// its relaunch is counted as one (not as a failed attempt), and every
// question transition was logged exactly once.
func CheckAnswerReachedA1(t *testing.T, r *Repo, q questions.Question, answer string) {
	t.Helper()
	dir, _ := LatestRunDir(r.Layout(), 0, "A1")
	prompt, err := os.ReadFile(filepath.Join(dir, lanes.PromptFile))
	if err != nil {
		t.Fatal(err)
	}
	p := string(prompt)
	i := strings.Index(p, "\n"+questions.HeadAnswers+"\n")
	if i < 0 || !strings.Contains(p[i:], AskedQuestion) || !strings.Contains(p[i:], answer) || !strings.Contains(p[i:], q.ID) {
		t.Fatalf("A1's prompt after the answer has no answers block with the question and the answer:\n%s", p)
	}
	evs := r.Events()
	qe := QuestionEvents(evs)
	if qe[q.ID+" asked"] != 1 || qe[q.ID+" answered"] != 1 || len(qe) != 2 {
		t.Fatalf("question events %v: want %s asked once and answered once", qe, q.ID)
	}
	relaunches := 0
	for _, ev := range evs {
		if ev.EntityType == state.EntityAgentRun && ev.Action == "started" && ev.Data["relaunchedFor"] == "answer" {
			relaunches++
			if ev.Data["agentId"] != "A1" {
				t.Fatalf("relaunched %v for an answer", ev.Data["agentId"])
			}
		}
		if ev.EntityType == state.EntityRetry {
			t.Fatalf("the answer cost a retry: %+v", ev)
		}
	}
	if relaunches != 1 {
		t.Fatalf("%d relaunches for the answer, want 1", relaunches)
	}
}

// LatestRunDir is agent id's newest run directory in wave n and its index
// (0 when it never ran).
func LatestRunDir(l lanes.Layout, n int, id string) (string, int) {
	for k := 1; ; k++ {
		if _, err := os.Stat(l.RunDir(n, id, k)); err != nil {
			return l.RunDir(n, id, k-1), k - 1
		}
	}
}
