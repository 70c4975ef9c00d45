package telemetry

import (
	"path/filepath"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/otelenv"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// Span names (docs/observability.md).
const (
	SpanWave          = "wave"
	SpanClosure       = "wave.closure"
	SpanAgent         = "wave.agent"
	SpanBacklogRun    = "backlog.run"
	SpanBacklogIssue  = "backlog.issue"
	SpanBacklogWorker = "backlog.worker"
	SpanBacklogMerge  = "backlog.merge"
	SpanBacklogVerify = "backlog.verify"
)

// Attribute keys besides otelenv's.
const (
	attrOutcome    = "wave.outcome"
	attrExitCode   = "wave.exit_code"
	attrStatusCode = "wave.status_code"
	attrPhase      = "wave.closure.phase"
	attrModel      = "wave.model"
	attrCost       = "wave.cost_usd"
	attrTokensIn   = "wave.tokens.input"
	attrTokensOut  = "wave.tokens.output"
	attrTokensCR   = "wave.tokens.cache_read"
	attrTokensCW   = "wave.tokens.cache_write"
	attrBranch     = "wave.backlog.wave_branch"
	attrBase       = "wave.backlog.base"
	attrSource     = "wave.backlog.source"
	attrCommit     = "wave.backlog.commit"
	attrMode       = "wave.mode"
)

// op is one change the event logs make to a span: opened (End false) or
// closed. Spans are named by a trace key and a span key within it, from
// which their ids are derived (ids.go).
type op struct {
	End    bool
	Trace  string
	Key    string
	Parent string // "" for a trace's root
	Name   string
	At     time.Time
	Attrs  []attribute.KeyValue // opened: the span's; closed: added at the end
	Err    string               // closed: what failed ("" = it went well)
	RunDir string               // an agent's run directory: its executor and spend are read there
}

const rootKey = "root"

// spans keeps which spans of the models are open, by trace and key.
type spans struct {
	open map[string]bool
}

func (s *spans) id(trace, key string) string { return trace + "\x00" + key }

func (s *spans) start(out *[]op, o op) {
	if s.open == nil {
		s.open = map[string]bool{}
	}
	if s.open[s.id(o.Trace, o.Key)] {
		return // seen already: an adopted run, a resumed supervisor
	}
	s.open[s.id(o.Trace, o.Key)] = true
	*out = append(*out, o)
}

func (s *spans) end(out *[]op, trace, key string, at time.Time, errText string, attrs ...attribute.KeyValue) {
	if !s.open[s.id(trace, key)] {
		return
	}
	delete(s.open, s.id(trace, key))
	*out = append(*out, op{End: true, Trace: trace, Key: key, At: at, Err: errText, Attrs: attrs})
}

// laneModel turns a lane's events.jsonl into span ops: a trace per wave
// run, with its closure stages and agent runs.
type laneModel struct {
	lane  string
	s     spans
	waves map[int]*waveTrace
}

type waveTrace struct {
	trace    string
	children []string // keys opened under the root, in order
	closure  string   // the closure stage running, "" none
}

func newLaneModel(lane string) *laneModel { return &laneModel{lane: lane, waves: map[int]*waveTrace{}} }

func (m *laneModel) apply(ev state.Event) []op {
	var out []op
	w := m.waves[ev.Wave]
	str := func(k string) string { s, _ := ev.Data[k].(string); return s }
	switch ev.EntityType {
	case state.EntityWaveRun:
		if w != nil {
			m.endWave(&out, ev.Wave, ev.RecordedAt, ev.Action, "superseded by a new wave run")
		}
		if ev.Action != "started" {
			return out
		}
		w = &waveTrace{trace: "wave\x00" + m.lane + "\x00" + strconv.Itoa(ev.Wave) + "\x00" + ev.ID}
		m.waves[ev.Wave] = w
		m.s.start(&out, op{Trace: w.trace, Key: rootKey, Name: SpanWave, At: ev.RecordedAt,
			Attrs: []attribute.KeyValue{attribute.String(otelenv.Lane, m.lane), attribute.Int(otelenv.Wave, ev.Wave)}})
	case state.EntityClosure:
		if w == nil {
			return nil
		}
		key := "closure\x00" + str("phase") + "\x00" + strconv.Itoa(ev.Attempt)
		switch ev.Action {
		case state.StageRunning:
			m.s.start(&out, op{Trace: w.trace, Key: key, Parent: rootKey, Name: SpanClosure, At: ev.RecordedAt,
				Attrs: []attribute.KeyValue{attribute.String(otelenv.Lane, m.lane), attribute.Int(otelenv.Wave, ev.Wave),
					attribute.String(attrPhase, str("phase")), attribute.Int(otelenv.Attempt, ev.Attempt)}})
			w.children = append(w.children, key)
			w.closure = key
		case state.StagePassed, state.StageFailed, state.StageSkipped:
			errText := ""
			if ev.Action == state.StageFailed {
				errText = "closure stage failed: " + str("detail")
			}
			m.s.end(&out, w.trace, key, ev.RecordedAt, errText, attribute.String(attrOutcome, ev.Action))
			if w.closure == key {
				w.closure = ""
			}
		}
	case state.EntityAgentRun:
		if w == nil || ev.Action == state.AgentReused {
			return nil
		}
		dir := str("runDir")
		key := "agent\x00" + dir
		if ev.Action == "started" {
			parent := rootKey
			if w.closure != "" {
				parent = w.closure
			}
			agent := str("agentId")
			m.s.start(&out, op{Trace: w.trace, Key: key, Parent: parent, Name: SpanAgent, At: ev.RecordedAt, RunDir: dir,
				Attrs: []attribute.KeyValue{attribute.String(otelenv.Lane, m.lane), attribute.Int(otelenv.Wave, ev.Wave),
					attribute.String(otelenv.Agent, agent), attribute.Int(otelenv.Attempt, ev.Attempt),
					attribute.String(otelenv.RunID, "w"+strconv.Itoa(ev.Wave)+"-"+filepath.Base(dir)),
					attribute.String(otelenv.Executor, str("executorId"))}})
			w.children = append(w.children, key)
			return out
		}
		attrs := []attribute.KeyValue{attribute.String(attrOutcome, ev.Action)}
		if c, ok := ev.Data["exitCode"].(float64); ok {
			attrs = append(attrs, attribute.Int(attrExitCode, int(c)))
		}
		if sc := str("statusCode"); sc != "" {
			attrs = append(attrs, attribute.String(attrStatusCode, sc))
		}
		errText := ""
		if ev.Action != state.AgentCompleted {
			errText = "agent run " + ev.Action
			if d := str("detail"); d != "" {
				errText += ": " + d
			}
		}
		m.s.end(&out, w.trace, key, ev.RecordedAt, errText, attrs...)
	}
	return out
}

// endWave ends wave n's open spans, children first, then the wave.
func (m *laneModel) endWave(out *[]op, n int, at time.Time, outcome, why string) {
	w := m.waves[n]
	for i := len(w.children) - 1; i >= 0; i-- {
		m.s.end(out, w.trace, w.children[i], at, "ended with the wave run ("+outcome+")")
	}
	errText := ""
	switch outcome {
	case state.WaveCompleted:
	case "started":
		errText = why
	default:
		errText = "wave run " + outcome
	}
	m.s.end(out, w.trace, rootKey, at, errText, attribute.String(attrOutcome, outcome))
	delete(m.waves, n)
}

// backlogModel turns one backlog run's events.jsonl into span ops: one
// trace for the run, a span per issue, and under it its worker runs and
// merges (each merge's verify under it).
type backlogModel struct {
	lane, run string
	trace     string
	s         spans
	issues    map[int]*issueTrace
	order     []int
}

type issueTrace struct {
	key, worker, merge, verify string
	gen, merges, verifies      int
	outcome                    string
}

func newBacklogModel(lane, run string) *backlogModel {
	return &backlogModel{lane: lane, run: run, trace: "backlog\x00" + lane + "\x00" + run, issues: map[int]*issueTrace{}}
}

func (m *backlogModel) base() []attribute.KeyValue {
	return []attribute.KeyValue{attribute.String(otelenv.Lane, m.lane), attribute.String(otelenv.BacklogRun, m.run)}
}

func (m *backlogModel) issueAttrs(n int) []attribute.KeyValue {
	return append(m.base(), attribute.Int(otelenv.Issue, n))
}

func (m *backlogModel) apply(ev backlog.Event) []op {
	var out []op
	n := ev.Issue
	switch ev.Kind {
	case backlog.EvRunStarted:
		attrs := m.base()
		at := ev.At
		if r := ev.Run; r != nil {
			attrs = append(attrs, attribute.String(attrSource, r.Source), attribute.String(attrBranch, r.WaveBranch),
				attribute.String(attrBase, r.Base))
			if !r.StartedAt.IsZero() {
				at = r.StartedAt
			}
		}
		m.s.start(&out, op{Trace: m.trace, Key: rootKey, Name: SpanBacklogRun, At: at, Attrs: attrs})
	case backlog.EvIssue, backlog.EvClaimed:
		m.issue(&out, n, ev.At)
	case backlog.EvWorkerStarted:
		it := m.issue(&out, n, ev.At)
		key := "worker\x00" + strconv.Itoa(n) + "\x00" + filepath.Base(ev.RunDir)
		m.s.end(&out, m.trace, it.worker, ev.At, "superseded by a new worker run")
		it.worker = key
		m.s.start(&out, op{Trace: m.trace, Key: key, Parent: it.key, Name: SpanBacklogWorker, At: ev.At, RunDir: ev.RunDir,
			Attrs: append(m.issueAttrs(n), attribute.Int(otelenv.Attempt, ev.Attempt), attribute.String(otelenv.Agent, "i"+strconv.Itoa(n)),
				attribute.String(otelenv.RunID, filepath.Base(ev.RunDir)))})
	case backlog.EvWorkerFinished:
		it := m.issues[n]
		if it == nil {
			return nil
		}
		attrs := []attribute.KeyValue{attribute.String(attrOutcome, ev.Outcome)}
		if ev.ExitCode != nil {
			attrs = append(attrs, attribute.Int(attrExitCode, *ev.ExitCode))
		}
		errText := ""
		switch ev.Outcome {
		case backlog.OutcomeFailed, backlog.OutcomeLost, backlog.OutcomeStalled, backlog.OutcomeTimedOut,
			backlog.OutcomeBlocked, backlog.OutcomeNoWork, backlog.OutcomeEnvironment:
			errText = "worker " + ev.Outcome
			if ev.Detail != "" {
				errText += ": " + ev.Detail
			}
		}
		m.s.end(&out, m.trace, it.worker, ev.At, errText, attrs...)
		it.worker = ""
		it.outcome = ev.Outcome
	case backlog.EvMergeStarted:
		it := m.issue(&out, n, ev.At)
		m.endMerge(&out, it, ev.At, "superseded by a new merge")
		it.merges++
		it.merge = "merge\x00" + strconv.Itoa(n) + "\x00" + strconv.Itoa(it.merges)
		m.s.start(&out, op{Trace: m.trace, Key: it.merge, Parent: it.key, Name: SpanBacklogMerge, At: ev.At, Attrs: m.issueAttrs(n)})
	case backlog.EvVerify:
		it := m.issue(&out, n, ev.At)
		if ev.Outcome == "running" {
			m.s.end(&out, m.trace, it.verify, ev.At, "superseded by a new verify")
			it.verifies++
			it.verify = "verify\x00" + strconv.Itoa(n) + "\x00" + strconv.Itoa(it.verifies)
			parent := it.merge
			if parent == "" {
				parent = it.key
			}
			m.s.start(&out, op{Trace: m.trace, Key: it.verify, Parent: parent, Name: SpanBacklogVerify, At: ev.At, Attrs: m.issueAttrs(n)})
			return out
		}
		errText := ""
		if ev.Outcome != "passed" {
			errText = "verify " + ev.Outcome
		}
		m.s.end(&out, m.trace, it.verify, ev.At, errText, attribute.String(attrOutcome, ev.Outcome))
		it.verify = ""
	case backlog.EvMerged:
		it := m.issue(&out, n, ev.At)
		m.endMerge(&out, it, ev.At, "", attribute.String(attrOutcome, "merged"), attribute.String(attrCommit, ev.Commit))
		it.outcome = backlog.StateMerged
		m.endIssue(&out, n, ev.At, "")
	case backlog.EvConflict, backlog.EvRework:
		if it := m.issues[n]; it != nil {
			what := ev.Kind
			if ev.Kind == backlog.EvRework {
				what = "rework (" + ev.Outcome + ")"
			}
			m.endMerge(&out, it, ev.At, what, attribute.String(attrOutcome, ev.Kind))
		}
	case backlog.EvNeedsInput:
		if it := m.issues[n]; it != nil {
			m.endMerge(&out, it, ev.At, "", attribute.String(attrOutcome, backlog.StateNeedsInput))
			it.outcome = backlog.StateNeedsInput
		}
	case backlog.EvParked, backlog.EvFailed, backlog.EvDropped, backlog.EvClaimLost:
		it := m.issues[n]
		if it == nil {
			return nil
		}
		it.outcome = ev.Kind
		detail := ev.Kind
		if ev.Detail != "" {
			detail += ": " + ev.Detail
		}
		m.endIssue(&out, n, ev.At, detail)
	case backlog.EvRunFinished:
		for _, i := range m.order {
			m.endIssue(&out, i, ev.At, "")
		}
		attrs := []attribute.KeyValue{attribute.String(attrOutcome, ev.Outcome)}
		errText := ""
		if ev.ExitCode != nil {
			attrs = append(attrs, attribute.Int(attrExitCode, *ev.ExitCode))
			if *ev.ExitCode == 1 {
				errText = "backlog run failed: " + ev.Detail
			}
		}
		m.s.end(&out, m.trace, rootKey, ev.At, errText, attrs...)
	}
	return out
}

// issue is issue n's trace state, its span opened if it is not.
func (m *backlogModel) issue(out *[]op, n int, at time.Time) *issueTrace {
	it := m.issues[n]
	if it == nil {
		it = &issueTrace{}
		m.issues[n] = it
		m.order = append(m.order, n)
	}
	if it.key == "" {
		it.gen++
		it.key = "issue\x00" + strconv.Itoa(n) + "\x00" + strconv.Itoa(it.gen)
		m.s.start(out, op{Trace: m.trace, Key: it.key, Parent: rootKey, Name: SpanBacklogIssue, At: at, Attrs: m.issueAttrs(n)})
	}
	return it
}

func (m *backlogModel) endMerge(out *[]op, it *issueTrace, at time.Time, errText string, attrs ...attribute.KeyValue) {
	m.s.end(out, m.trace, it.verify, at, errText)
	m.s.end(out, m.trace, it.merge, at, errText, attrs...)
	it.verify, it.merge = "", ""
}

// endIssue ends issue n's span and whatever is open under it.
func (m *backlogModel) endIssue(out *[]op, n int, at time.Time, errText string) {
	it := m.issues[n]
	if it == nil || it.key == "" {
		return
	}
	m.endMerge(out, it, at, errText)
	m.s.end(out, m.trace, it.worker, at, errText)
	outcome := it.outcome
	if outcome == "" {
		outcome = "unfinished"
	}
	m.s.end(out, m.trace, it.key, at, errText, attribute.String(attrOutcome, outcome))
	it.key, it.worker = "", ""
}
