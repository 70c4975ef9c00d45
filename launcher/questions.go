package launcher

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// asking is what a wave run knows of its agents' questions to people:
// the coordination log's changes (fsnotify), what the event log was told
// of each question (so every transition is appended once, across
// launcher restarts), and how often each agent was relaunched with an
// answer (counted apart from failed attempts).
type asking struct {
	changes    <-chan struct{} // nil: the watch failed; the 1 s tick reads the log instead
	told       map[string]string
	relaunches map[string]int
	relaunch   map[string]bool // the next start of the agent is a relaunch with answers
}

// watchQuestions starts following wave n's coordination log for the
// wave run (until ctx ends).
func (r *waveRun) watchQuestions(ctx context.Context) {
	l := r.l
	r.ask = asking{told: toldQuestions(l.opt.Layout.EventsPath(), r.n), relaunches: map[string]int{}, relaunch: map[string]bool{}}
	ch, err := questions.WatchWave(ctx, l.opt.Layout, r.n)
	if err != nil {
		l.log.Warn("questions: watching the coordination log failed; reading it every second", "wave", r.n, "err", err)
		return
	}
	r.ask.changes = ch
}

// toldQuestions is the last question action the lane's event log holds
// for each question of wave n.
func toldQuestions(eventsPath string, n int) map[string]string {
	evs, _, _ := state.ReadEvents(eventsPath)
	out := map[string]string{}
	for _, ev := range evs {
		if ev.Wave == n && ev.EntityType == state.EntityQuestion {
			out[ev.EntityID] = ev.Action
		}
	}
	return out
}

// syncQuestions reads the wave's questions and appends the events of
// what changed since the log was last told: asked, then answered.
func (r *waveRun) syncQuestions() []questions.Question {
	l := r.l
	un := map[string]bool{}
	for id, a := range r.ask.told {
		un[id] = a == state.QuestionUnanswered
	}
	qs, _, err := questions.WaveQuestions(l.opt.Layout, r.n, un)
	if err != nil {
		l.log.Warn("questions: coordination log unreadable", "wave", r.n, "err", err)
		return nil
	}
	for _, q := range qs {
		if _, ok := r.ask.told[q.ID]; !ok {
			r.tell(q, state.QuestionAsked)
			how := "non-blocking"
			if q.Blocking {
				how = "blocking"
			}
			l.printf("wave %d: %s asks a person (%s, %s): %s\n  answer with: %s answer %s \"<answer>\"", r.n, q.AgentID, q.ID, how,
				oneLine(q.Text), shellWord(l.opt.Self), q.ID)
		}
		if q.State == questions.Answered && r.ask.told[q.ID] != state.QuestionAnswered {
			r.tell(q, state.QuestionAnswered)
			l.printf("wave %d: %s answered by %s: %s", r.n, q.ID, orDash(q.Operator), oneLine(q.Answer))
		}
	}
	return qs
}

func (r *waveRun) tell(q questions.Question, action string) {
	d := state.QuestionData{AgentID: q.AgentID, Attempt: q.Attempt, Text: q.Text, Blocking: q.Blocking}
	if action == state.QuestionAsked {
		d.Context = q.Context // for the notify sinks
	}
	if action == state.QuestionAnswered {
		d.Answer, d.Operator = q.Answer, q.Operator
	}
	r.ask.told[q.ID] = action
	r.l.emit(r.n, state.EntityQuestion, q.ID, action, q.Attempt, d)
}

// answerState sorts agent id's blocking questions against its finished
// run in dir: pending ones still wait for a person; late ones were
// answered after the run ended (or the agent never saw them), so the
// agent must run again to get them.
func answerState(qs []questions.Question, id string, started, ended time.Time) (pending, late []questions.Question) {
	for _, q := range questions.ForAgent(qs, id) {
		if !q.Blocking {
			continue
		}
		switch {
		case q.State != questions.Answered:
			pending = append(pending, q)
		case q.AnsweredAt != nil && q.AnsweredAt.After(ended) && q.AnsweredAt.After(started):
			// An answer the run could not have read: `ask --wait` gets
			// its answer before the run ends.
			late = append(late, q)
		}
	}
	return pending, late
}

// runSpan is when the run in dir started and ended, from its runtime
// record (now for what the record does not say).
func runSpan(dir string, now time.Time) (started, ended time.Time) {
	started, ended = now, now
	if rec, err := runtime.ReadRecord(filepath.Join(dir, lanes.RuntimeFile)); err == nil {
		started = rec.StartedAt
		if rec.FinishedAt != nil {
			ended = *rec.FinishedAt
		}
	}
	return started, ended
}

// afterRun decides what a finished run of agent id needs: wait for a
// person (its blocking questions pending), a relaunch with the answers
// (answered after it ended), or nothing.
func (r *waveRun) afterRun(id, dir string) (wait, relaunch bool) {
	qs := r.syncQuestions()
	started, ended := runSpan(dir, r.l.now())
	pending, late := answerState(qs, id, started, ended)
	switch {
	case len(pending) > 0:
		for _, q := range pending {
			r.l.printf("wave %d: waiting for input: %s asked %s: %s", r.n, id, q.ID, oneLine(q.Text))
		}
		return true, false
	case len(late) > 0:
		return false, true
	}
	return false, false
}

// inputExpired are the pending questions of agent id asked longer ago
// than runtime.inputTimeout* (none when it is 0).
func (r *waveRun) inputExpired(id string) []questions.Question {
	limit := r.l.opt.Lane.Runtime.InputTimeout()
	if limit <= 0 {
		return nil
	}
	var out []questions.Question
	qs, _, _ := questions.WaveQuestions(r.l.opt.Layout, r.n, nil)
	for _, q := range questions.ForAgent(qs, id) {
		if q.Blocking && q.State != questions.Answered && r.l.now().Sub(q.AskedAt) >= limit {
			out = append(out, q)
		}
	}
	return out
}

// giveUp records the questions as unanswered: the agent's last result
// stands and the wave ends needing a person (exit 43).
func (r *waveRun) giveUp(qs []questions.Question) {
	for _, q := range qs {
		if r.ask.told[q.ID] == state.QuestionUnanswered {
			continue
		}
		if _, ok := r.ask.told[q.ID]; !ok {
			r.tell(q, state.QuestionAsked)
		}
		q.State = questions.Unanswered
		r.tell(q, state.QuestionUnanswered)
		r.l.printf("wave %d: no answer to %s within runtime.inputTimeout; it is unanswered", r.n, q.ID)
	}
}

// answersFor is what people answered agent id's questions: the "Answers
// from people" block of its prompt, and its run's answers file.
func (r *waveRun) answersFor(id string) []questions.Question {
	qs, _, _ := questions.WaveQuestions(r.l.opt.Layout, r.n, nil)
	return questions.AnsweredOf(questions.ForAgent(qs, id))
}

// tellAnswered gives a run started with answers a signal no prompt text
// can fake or hide: every prompt's rules mention the answers heading, so
// an agent that is no model (a script) reads $WAVE_ANSWERED=1 and the
// answers, as `questions --json` shows them, in $WAVE_ANSWERS_FILE.
func tellAnswered(p *runtime.Payload, answered []questions.Question) error {
	if len(answered) == 0 {
		return nil
	}
	path := filepath.Join(p.RunDir, lanes.AnswersFile)
	if err := jsonfile.Write(path, answered); err != nil {
		return fmt.Errorf("answers file: %w", err)
	}
	p.Env["WAVE_ANSWERED"] = "1"
	p.Env["WAVE_ANSWERS_FILE"] = path
	return nil
}

// pendingBlock is every question of the wave still waiting for a person,
// in one block, for the end of a launch that exits 43.
func (r *waveRun) pendingBlock() string {
	qs, _, _ := questions.WaveQuestions(r.l.opt.Layout, r.n, nil)
	var b strings.Builder
	for _, q := range questions.PendingOf(qs) {
		if b.Len() == 0 {
			fmt.Fprintf(&b, "questions waiting for a person in wave %d:\n", r.n)
		}
		fmt.Fprintf(&b, "  - %s (%s, asked %s): %s\n", q.ID, q.AgentID, q.AskedAt.Format(time.RFC3339), oneLine(q.Text))
	}
	if b.Len() > 0 {
		fmt.Fprintf(&b, "answer with `%s answer ID \"<answer>\"` and then `%s resume -w %d` (or `answer --resume`)\n",
			shellWord(r.l.opt.Self), shellWord(r.l.opt.Self), r.n)
	}
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:197]) + "..."
	}
	return s
}
