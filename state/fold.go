package state

import (
	"encoding/json"
	"slices"
	"sort"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// Fold is the one reducer's state over the lane's event log read so far:
// Apply takes the next event in append order, and Waves, Notifications,
// StartedRuns, LoggedRuns and UnansweredIDs say what the events read give.
// Reduce, ReduceNotifications and LoadEvents fold a whole log; the
// launcher's spend log keeps one and applies the lines appended since.
// The zero Fold has read nothing.
type Fold struct {
	// waves are the waves in the order first seen, before any run facts,
	// blockers or questions are laid over them.
	waves []Wave
	// started are the run directories of agent_run started events, first
	// seen first (as indexes into logged): the runs Load observes.
	started []int
	// logged is every run directory an agent_run event names, first seen
	// first, with the usage its events last recorded.
	logged []LoggedRun
	// open are the question ids whose last answer event is unanswered.
	open map[string]bool
	// notices is the notification events' tally.
	notices *noticeFold

	index    map[int]int    // wave number → waves index, made on first use
	runIndex map[string]int // run directory → logged index, made on first use
	// agentIndex is, per waves index, agent id → index in its Agents,
	// made on first use: a lane of thousands of runs is not a scan of
	// every agent for each of their events.
	agentIndex map[int]map[string]int
}

// LoggedRun is a run directory the event log names and the usage its
// agent_run events last recorded (nil when none did): what counts the
// spend of a run whose directory was pruned.
type LoggedRun struct {
	RunDir string
	Usage  *usage.Usage
	// Started: an agent_run started event named it (Fold.StartedRuns).
	Started bool
}

// noticeFold is ReduceNotifications' state: each notice's latest action
// and the latest failures.
type noticeFold struct {
	State    map[string]string
	Failures []NotificationFailure
	// Sinks is each sink's tally, from the outcomes in log order.
	Sinks map[string]*SinkNotifications
}

// FoldEvents folds evs from the start.
func FoldEvents(evs []Event) *Fold {
	f := &Fold{}
	for _, ev := range evs {
		f.Apply(ev)
	}
	return f
}

// Apply takes the next event of the log.
func (f *Fold) Apply(ev Event) {
	switch ev.EntityType {
	case EntityNotification:
		f.applyNotice(ev)
		return
	case EntityAgentRun:
		f.noteRun(ev)
	case EntityQuestion:
		f.noteQuestion(ev)
	}
	if f.index == nil {
		f.index = map[int]int{}
	}
	i, ok := f.index[ev.Wave]
	if !ok {
		f.waves = append(f.waves, Wave{Wave: ev.Wave, Status: WavePending})
		i = len(f.waves) - 1
		f.index[ev.Wave] = i
	}
	var agents map[string]int
	if ev.EntityType == EntityAgentRun {
		agents = f.agentsOf(i)
	}
	apply(&f.waves[i], ev, agents)
	if ev.EntityType == EntityWaveRun {
		delete(f.agentIndex, i) // a new run of the wave lists its agents afresh
	}
}

// agentsOf is the agent index of waves[i]: each id's first agent.
func (f *Fold) agentsOf(i int) map[string]int {
	if f.agentIndex == nil {
		f.agentIndex = map[int]map[string]int{}
	}
	m, ok := f.agentIndex[i]
	if !ok {
		as := f.waves[i].Agents
		m = make(map[string]int, len(as))
		for j, a := range as {
			if _, dup := m[a.ID]; !dup {
				m[a.ID] = j
			}
		}
		f.agentIndex[i] = m
	}
	return m
}

// noteRun records the run directory of an agent_run event.
func (f *Fold) noteRun(ev Event) {
	d, _ := ev.Data["runDir"].(string)
	if d == "" {
		return
	}
	if f.runIndex == nil {
		f.runIndex = map[string]int{}
	}
	i, ok := f.runIndex[d]
	if !ok {
		f.logged = append(f.logged, LoggedRun{RunDir: d})
		i = len(f.logged) - 1
		f.runIndex[d] = i
	}
	if ev.Action == "started" && !f.logged[i].Started {
		f.logged[i].Started = true
		f.started = append(f.started, i)
	}
	if u := eventUsage(ev.Data); u != nil {
		f.logged[i].Usage = u
	}
}

// eventUsage is the usage an agent_run event recorded, or nil.
func eventUsage(data map[string]any) *usage.Usage {
	raw, ok := data["usage"].(map[string]any)
	if !ok {
		return nil
	}
	var u usage.Usage
	b, _ := json.Marshal(raw)
	if json.Unmarshal(b, &u) != nil {
		return nil
	}
	return u.Ptr()
}

// noteQuestion tracks which questions the launcher gave up on.
func (f *Fold) noteQuestion(ev Event) {
	switch ev.Action {
	case QuestionUnanswered:
		if f.open == nil {
			f.open = map[string]bool{}
		}
		f.open[ev.EntityID] = true
	case QuestionAnswered:
		delete(f.open, ev.EntityID)
	}
}

// Waves is the state of every wave seen, by number, with the run facts
// and open blockers laid over it. The fold itself is left as it was.
func (f *Fold) Waves(runs map[string]RunFacts, blockers map[int][]Blocker, now time.Time) []Wave {
	out := make([]Wave, 0, len(f.waves))
	for _, w := range f.waves {
		w.Agents = slices.Clone(w.Agents) // overlay writes to them
		for i := range w.Agents {
			overlay(&w.Agents[i], runs, now)
		}
		w.markAsking()
		w.Blockers = blockers[w.Wave]
		if w.Failures == nil {
			w.Failures = []Failure{}
		}
		if w.Blockers == nil {
			w.Blockers = []Blocker{}
		}
		if w.Questions == nil {
			w.Questions = []Question{}
		}
		out = append(out, w)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Wave < out[j].Wave })
	return out
}

// StartedRuns are the run directories of agent_run started events, first
// seen first.
func (f *Fold) StartedRuns() []string {
	out := make([]string, len(f.started))
	for i, j := range f.started {
		out[i] = f.logged[j].RunDir
	}
	return out
}

// LoggedRuns is every run directory the log names, first seen first.
func (f *Fold) LoggedRuns() []LoggedRun { return f.logged }

// UnansweredIDs are the questions the launcher gave up waiting on (and no
// answer came after); nil when none. Read only.
func (f *Fold) UnansweredIDs() map[string]bool { return f.open }

// UnansweredQuestions is Fold.UnansweredIDs over evs, never nil.
func UnansweredQuestions(evs []Event) map[string]bool {
	f := Fold{open: map[string]bool{}}
	for _, ev := range evs {
		if ev.EntityType == EntityQuestion {
			f.noteQuestion(ev)
		}
	}
	return f.open
}
