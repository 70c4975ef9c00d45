// Package gate owns the marker grammar agents print into their logs
// ([wave-proof], [wave-gate], …), the per-agent summary built from a log
// and the files an agent was meant to land, and the gate verdicts that
// decide whether implementation and each closure stage passed.
//
// It is pure: it reads only the text and the fs.FS it is handed.
package gate

import (
	"strings"

	"regexp"
)

// MaxLogChars is how much of a log's tail ParseLog considers.
const MaxLogChars = 60000

// Marker payloads. Field names follow the reference's summary JSON.
type (
	Proof struct {
		Completion string `json:"completion"`
		Durability string `json:"durability"`
		Proof      string `json:"proof"`
		State      string `json:"state"` // met|gap
		Detail     string `json:"detail"`
	}
	DocDelta struct {
		State  string   `json:"state"` // none|owned|shared-plan
		Paths  []string `json:"paths"`
		Detail string   `json:"detail"`
	}
	DocClosure struct {
		State  string   `json:"state"` // closed|no-change|delta
		Paths  []string `json:"paths"`
		Detail string   `json:"detail"`
	}
	Integration struct {
		State     string `json:"state"`
		Claims    int    `json:"claims"`
		Conflicts int    `json:"conflicts"`
		Blockers  int    `json:"blockers"`
		Detail    string `json:"detail"`
	}
	Eval struct {
		State        string   `json:"state"`
		Targets      int      `json:"targets"`
		Benchmarks   int      `json:"benchmarks"`
		Regressions  int      `json:"regressions"`
		TargetIDs    []string `json:"targetIds"`
		BenchmarkIDs []string `json:"benchmarkIds"`
		Detail       string   `json:"detail"`
	}
	Security struct {
		State     string `json:"state"` // clear|concerns|blocked
		Findings  int    `json:"findings"`
		Approvals int    `json:"approvals"`
		Detail    string `json:"detail"`
	}
	Design struct {
		State         string `json:"state"`
		Decisions     int    `json:"decisions"`
		Assumptions   int    `json:"assumptions"`
		OpenQuestions int    `json:"openQuestions"`
		Detail        string `json:"detail"`
	}
	// GateDims is the cont-QA [wave-gate] marker.
	GateDims struct {
		Architecture string `json:"architecture"`
		Integration  string `json:"integration"`
		Durability   string `json:"durability"`
		Live         string `json:"live"`
		Docs         string `json:"docs"`
		Detail       string `json:"detail"`
	}
	// Verdict is a cont-QA verdict, lower case: pass|concerns|blocked|hold|fail.
	Verdict struct {
		Verdict string `json:"verdict"`
		Detail  string `json:"detail"`
	}
	Component struct {
		ComponentID string `json:"componentId"`
		Level       string `json:"level"`
		State       string `json:"state"` // met|gap
		Detail      string `json:"detail"`
	}
	Gap struct {
		Kind   string `json:"kind"`
		Detail string `json:"detail"`
	}
)

// Diag counts the marker lines of one kind and keeps a few rejected ones
// so a user can see why a marker did not count.
type Diag struct {
	RawCount         int        `json:"rawCount"`
	AcceptedCount    int        `json:"acceptedCount"`
	RejectedCount    int        `json:"rejectedCount"`
	RejectedSamples  []Rejected `json:"rejectedSamples"`
	UnknownKeysSeen  []string   `json:"unknownKeysSeen"`
	SeenComponentIDs []string   `json:"seenComponentIds,omitempty"`
}

// Rejected is one marker line that did not parse, and why.
type Rejected struct {
	Line        string `json:"line"`
	Reason      string `json:"reason"`
	ComponentID string `json:"componentId,omitempty"`
}

const maxRejectedSamples = 3

// Signals are the markers found in one log.
type Signals struct {
	Proof       *Proof               `json:"proof"`
	DocDelta    *DocDelta            `json:"docDelta"`
	DocClosure  *DocClosure          `json:"docClosure"`
	Integration *Integration         `json:"integration"`
	Eval        *Eval                `json:"eval"`
	Security    *Security            `json:"security"`
	Design      *Design              `json:"design"`
	Gate        *GateDims            `json:"gate"`
	Verdict     *Verdict             `json:"logVerdict"` // from [wave-verdict]
	Components  map[string]Component `json:"components"`
	Gaps        []Gap                `json:"gaps"`
	Phase       string               `json:"phase,omitempty"`
	Diagnostics map[string]Diag      `json:"structuredSignalDiagnostics"`

	// repairable are rejected markers that adjudication may accept
	// (adjudicate.go), by repairKey.
	repairable map[string]repaired
}

// Rejected reports whether any marker of kind was rejected.
func (s Signals) Rejected(kind string) bool { return s.Diagnostics[kind].RejectedCount > 0 }

// Marker kinds, as used in Signals.Diagnostics.
const (
	KindProof       = "proof"
	KindDocDelta    = "docDelta"
	KindDocClosure  = "docClosure"
	KindIntegration = "integration"
	KindEval        = "eval"
	KindSecurity    = "security"
	KindDesign      = "design"
	KindGate        = "gate"
	KindGap         = "gap"
	KindComponent   = "component"
	KindVerdict     = "verdict"
)

var kindByTag = map[string]string{
	"proof": KindProof, "doc-delta": KindDocDelta, "doc-closure": KindDocClosure,
	"integration": KindIntegration, "eval": KindEval, "security": KindSecurity,
	"design": KindDesign, "gate": KindGate, "gap": KindGap, "component": KindComponent,
	"verdict": KindVerdict,
}

var (
	ansiRe     = regexp.MustCompile(`\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]`)
	markerRe   = regexp.MustCompile(`(?i)^\[wave-[a-z0-9-]+(?:\]|\s|=|$)`)
	wrappedRe  = regexp.MustCompile("^`\\[wave-[^`]+`$")
	bulletRe   = regexp.MustCompile(`^(?:[-*+]|\d+\.)\s+`)
	tagRe      = regexp.MustCompile(`(?i)^\[wave-([a-z0-9-]+)\](.*)$`)
	keyStartRe = regexp.MustCompile(`(?i)(?:^|\s)([a-z][a-z0-9_-]*)=`)
)

// StripANSI removes terminal escape sequences.
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	return ansiRe.ReplaceAllString(s, "")
}

// tail returns the last max bytes of s, starting at a line boundary when
// the cut falls inside a line so a half marker is never parsed. A JSON
// event line cut by the window is kept whole: `claude --output-format
// json` prints the agent's whole answer as one line, and half of it would
// not decode.
func tail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := len(s) - max
	if start := strings.LastIndexByte(s[:cut], '\n') + 1; start < cut && strings.HasPrefix(strings.TrimLeft(s[start:cut], " \t"), "{") {
		return s[start:]
	}
	s = s[cut:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return ""
}

// ParseLog extracts markers from agent output. ANSI escapes are stripped
// and only the last MaxLogChars characters are considered.
func ParseLog(text string) Signals {
	p := newParser()
	for _, t := range AgentTexts(tail(StripANSI(text), MaxLogChars)) {
		p.text(t)
	}
	return p.sig
}

type parser struct {
	sig Signals
}

func newParser() *parser {
	p := &parser{sig: Signals{Components: map[string]Component{}, Diagnostics: map[string]Diag{}}}
	for _, k := range kindByTag {
		p.sig.Diagnostics[k] = Diag{RejectedSamples: []Rejected{}, UnknownKeysSeen: []string{}}
	}
	return p
}

// text reads one piece of agent text (AgentTexts) line by line.
func (p *parser) text(text string) {
	var fence []string // non-nil while inside a fenced block
	fenceMark := ""
	for _, raw := range strings.Split(text, "\n") {
		line := visibleLine(raw)
		trimmed := strings.TrimSpace(line)
		if m := fenceOpener(trimmed); m != "" && (fence == nil || strings.HasPrefix(trimmed, fenceMark)) {
			if fence == nil {
				fence, fenceMark = []string{}, m
				continue
			}
			p.fenced(fence)
			fence = nil
			continue
		}
		if fence != nil {
			if trimmed != "" {
				fence = append(fence, trimmed)
			}
			continue
		}
		p.line(trimmed)
	}
	if fence != nil {
		// The last opening fence has no closing one: fences do not pair,
		// so nothing says these lines are quoted. Agents often leave a
		// fence open before their report; read its lines one by one.
		for _, l := range fence {
			p.line(l)
		}
	}
}

// visibleLine keeps what a terminal would show last on a line rewritten
// with carriage returns (progress bars, pty output).
func visibleLine(raw string) string {
	raw = strings.TrimRight(raw, "\r")
	if i := strings.LastIndexByte(raw, '\r'); i >= 0 {
		return raw[i+1:]
	}
	return raw
}

func fenceOpener(trimmed string) string {
	switch {
	case strings.HasPrefix(trimmed, "```"):
		return "```"
	case strings.HasPrefix(trimmed, "~~~"):
		return "~~~"
	}
	return ""
}

// fenced counts a fenced block's markers only when every non-blank line
// is a marker: a fence that mixes prose or code with markers is an
// example, not a report.
func (p *parser) fenced(lines []string) {
	if len(lines) == 0 {
		return
	}
	for _, l := range lines {
		if candidate(l) == "" {
			return
		}
	}
	for _, l := range lines {
		p.line(l)
	}
}

// candidate returns the canonical marker text of a line, or "".
func candidate(trimmed string) string {
	s := strings.TrimSpace(bulletRe.ReplaceAllString(trimmed, ""))
	if markerRe.MatchString(s) {
		return s
	}
	if wrappedRe.MatchString(s) {
		return strings.TrimSpace(s[1 : len(s)-1])
	}
	return ""
}

func (p *parser) line(trimmed string) {
	c := candidate(trimmed)
	if c == "" {
		return
	}
	m := tagRe.FindStringSubmatch(c)
	if m == nil {
		return
	}
	tag := strings.ToLower(m[1])
	body := strings.TrimSpace(m[2])
	if tag == "phase" {
		if body != "" {
			p.sig.Phase = body
		}
		return
	}
	kind, ok := kindByTag[tag]
	if !ok {
		return
	}
	p.accept(kind, c, body)
}
