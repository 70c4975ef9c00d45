package launcher

import (
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// humanHolds turns open records that wait on a person into failures that
// stop retries (exit 43): a human escalation or feedback request holds
// every retry, as in the reference; a clarification request holds when it
// targets an agent that failed, since rerunning that agent cannot answer
// it. Nothing is added when the failures already name an open blocker.
func (r *waveRun) humanHolds(failures []gate.Failure) []gate.Failure {
	if needsHuman(failures) {
		return nil
	}
	recs, _, err := coord.Read(r.l.opt.Layout.CoordinationPath(r.n))
	if err != nil {
		return nil
	}
	var out []gate.Failure
	for _, rec := range coord.Open(recs) {
		if !coord.WaitsOnPerson(rec) {
			continue
		}
		held := ""
		for _, f := range failures {
			if f.AgentID != "" && coord.Targets(rec, f.AgentID) {
				held = f.AgentID
				break
			}
		}
		if held == "" && rec.Kind == "clarification-request" {
			continue
		}
		who, stopped := rec.AgentID, "no agent is retried"
		if held != "" {
			who, stopped = held, held+" is not retried"
		}
		out = append(out, gate.Failure{AgentID: who, Gate: "coordination", StatusCode: codeBlockerOpen,
			Detail: fmt.Sprintf("%s %s waits on a person, so %s: %s (%s)", rec.Kind, rec.ID, stopped, rec.Summary, r.resolveHint(rec))})
	}
	return out
}

// barrier holds closure while a blocking coordination record is open.
func (r *waveRun) barrier() []gate.Failure {
	recs, _, err := coord.Read(r.l.opt.Layout.CoordinationPath(r.n))
	if err != nil {
		return []gate.Failure{{Gate: "coordination", StatusCode: "coordination-unreadable", Detail: err.Error()}}
	}
	var f []gate.Failure
	for _, rec := range coord.Open(recs) {
		f = append(f, gate.Failure{AgentID: rec.AgentID, Gate: "coordination", StatusCode: codeBlockerOpen,
			Detail: fmt.Sprintf("%s %s: %s (%s)", rec.Kind, rec.ID, rec.Summary, r.resolveHint(rec))})
	}
	return f
}

// openBlockerAgents are the agents open blocking coordination records
// name, as author or target: a retry runs them again, so the author can
// see its blocker's cause gone and resolve it.
func (r *waveRun) openBlockerAgents() []string {
	recs, _, err := coord.Read(r.l.opt.Layout.CoordinationPath(r.n))
	if err != nil {
		return nil
	}
	var ids []string
	for _, rec := range coord.Open(recs) {
		ids = append(ids, rec.AgentID)
		for _, t := range rec.Targets {
			ids = append(ids, strings.TrimPrefix(t, "agent:"))
		}
	}
	return ids
}

// resolveHint says how to clear an open record: a question to a person is
// answered, anything else resolved.
func (r *waveRun) resolveHint(rec coord.Record) string {
	if questions.IsQuestion(rec) {
		return fmt.Sprintf("answer with `wave-orchestrator answer %s \"<answer>\"`", rec.ID)
	}
	return fmt.Sprintf("resolve with `wave-orchestrator coord post --wave %d --id %s --status resolved`", r.n, rec.ID)
}
