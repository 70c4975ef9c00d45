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
// Reduce, ReduceNotifications and LoadEvents fold a whole log; the status
// cache (Cache) keeps a Fold with the place in the log it reached, so a
// repeat `status` applies only the lines appended since. Its fields are
// exported for that encoding only: read it through its methods.
type Fold struct {
	// WaveStates are the waves in the order first seen, before any run
	// facts, blockers or questions are laid over them.
	WaveStates []Wave `json:"waves"`
	// Started are the run directories of agent_run started events, first
	// seen first (as indexes into Logged): the runs Load observes.
	Started []int `json:"started"`
	// Logged is every run directory an agent_run event names, first seen
	// first, with the usage its events last recorded.
	Logged []LoggedRun `json:"logged"`
	// Open are the question ids whose last answer event is unanswered.
	Open map[string]bool `json:"open"`
	// Notices is the notification events' tally.
	Notices *noticeFold `json:"notices"`

	index    map[int]int    // wave number → WaveStates index, rebuilt on demand
	runIndex map[string]int // run directory → Logged index, rebuilt on demand
	// agentIndex is, per WaveStates index, agent id → index in its
	// Agents, rebuilt on demand: a lane of thousands of runs is not a
	// scan of every agent for each of their events.
	agentIndex map[int]map[string]int
}

// LoggedRun is a run directory the event log names and the usage its
// agent_run events last recorded (nil when none did): what counts the
// spend of a run whose directory was pruned.
type LoggedRun struct {
	RunDir string       `json:"runDir"`
	Usage  *usage.Usage `json:"usage,omitempty"`
	// Started: an agent_run started event named it (Fold.StartedRuns).
	Started bool `json:"started,omitempty"`
}

// noticeFold is ReduceNotifications' state: each notice's latest action
// and the latest failures.
type noticeFold struct {
	State    map[string]string     `json:"state"`
	Failures []NotificationFailure `json:"failures"`
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
		f.index = make(map[int]int, len(f.WaveStates))
		for i, w := range f.WaveStates {
			f.index[w.Wave] = i
		}
	}
	i, ok := f.index[ev.Wave]
	if !ok {
		f.WaveStates = append(f.WaveStates, Wave{Wave: ev.Wave, Status: WavePending})
		i = len(f.WaveStates) - 1
		f.index[ev.Wave] = i
	}
	var agents map[string]int
	if ev.EntityType == EntityAgentRun {
		agents = f.agentsOf(i)
	}
	apply(&f.WaveStates[i], ev, agents)
	if ev.EntityType == EntityWaveRun {
		delete(f.agentIndex, i) // a new run of the wave lists its agents afresh
	}
}

// agentsOf is the agent index of WaveStates[i]: each id's first agent.
func (f *Fold) agentsOf(i int) map[string]int {
	if f.agentIndex == nil {
		f.agentIndex = map[int]map[string]int{}
	}
	m, ok := f.agentIndex[i]
	if !ok {
		as := f.WaveStates[i].Agents
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
		f.runIndex = make(map[string]int, len(f.Logged))
		for i, r := range f.Logged {
			f.runIndex[r.RunDir] = i
		}
	}
	i, ok := f.runIndex[d]
	if !ok {
		f.Logged = append(f.Logged, LoggedRun{RunDir: d})
		i = len(f.Logged) - 1
		f.runIndex[d] = i
	}
	if ev.Action == "started" && !f.Logged[i].Started {
		f.Logged[i].Started = true
		f.Started = append(f.Started, i)
	}
	if u := eventUsage(ev.Data); u != nil {
		f.Logged[i].Usage = u
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
		if f.Open == nil {
			f.Open = map[string]bool{}
		}
		f.Open[ev.EntityID] = true
	case QuestionAnswered:
		delete(f.Open, ev.EntityID)
	}
}

// Waves is the state of every wave seen, by number, with the run facts
// and open blockers laid over it. The fold itself is left as it was.
func (f *Fold) Waves(runs map[string]RunFacts, blockers map[int][]Blocker, now time.Time) []Wave {
	out := make([]Wave, 0, len(f.WaveStates))
	for _, w := range f.WaveStates {
		w.Agents = slices.Clone(w.Agents) // overlay writes to them
		for i := range w.Agents {
			overlay(&w.Agents[i], runs, now)
		}
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
	out := make([]string, len(f.Started))
	for i, j := range f.Started {
		out[i] = f.Logged[j].RunDir
	}
	return out
}

// LoggedRuns is every run directory the log names, first seen first.
func (f *Fold) LoggedRuns() []LoggedRun { return f.Logged }

// UnansweredIDs are the questions the launcher gave up waiting on (and no
// answer came after); nil when none. Read only.
func (f *Fold) UnansweredIDs() map[string]bool { return f.Open }

// UnansweredQuestions is Fold.UnansweredIDs over evs, never nil.
func UnansweredQuestions(evs []Event) map[string]bool {
	f := Fold{Open: map[string]bool{}}
	for _, ev := range evs {
		if ev.EntityType == EntityQuestion {
			f.noteQuestion(ev)
		}
	}
	return f.Open
}
