package gate

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// SummaryInput is what Summarize needs about one finished run.
type SummaryInput struct {
	Agent    *wave.Agent
	Bindings roles.Bindings
	Log      string // the run's log text (raw; ANSI is stripped here)
	ExitCode *int   // nil when the run left no status
	Signal   string // e.g. "SIGTERM" when the agent died by signal
	// FS is rooted at the repository; deliverables, proof artifacts and
	// report files are looked up through it.
	FS         fs.FS
	LogPath    string
	PromptHash string
	Attempt    int
	// ReportPath overrides the report path derived from the agent's role
	// and owned paths (e.g. the wave's contQaReportPath).
	ReportPath  string
	CompletedAt time.Time
	// StartedAt is when the run started; a report file older than that is
	// stale. Zero disables the check.
	StartedAt time.Time
}

// FileCheck records whether a declared file exists on disk.
type FileCheck struct {
	Path        string     `json:"path"`
	Kind        string     `json:"kind,omitempty"`
	RequiredFor []string   `json:"requiredFor,omitempty"`
	Exists      bool       `json:"exists"`
	ModifiedAt  *time.Time `json:"modifiedAt"`
}

// Summary is one run's summary.json: the markers of its log, the files it
// was meant to land, its report and how it ended.
type Summary struct {
	AgentID     string     `json:"agentId"`
	PromptHash  string     `json:"promptHash"`
	Attempt     int        `json:"attempt"`
	ExitCode    *int       `json:"exitCode"`
	Signal      string     `json:"signal,omitempty"`
	CompletedAt *time.Time `json:"completedAt"`
	Signals
	Deliverables   []FileCheck `json:"deliverables"`
	ProofArtifacts []FileCheck `json:"proofArtifacts"`
	ReportPath     string      `json:"reportPath"`
	ReportExists   bool        `json:"reportExists"`
	// ReportStale marks a report left by an earlier run (older than this
	// run's start); it counts as missing.
	ReportStale bool `json:"reportStale,omitempty"`
	// ReportVerdict is the first `Verdict:` line of the report.
	ReportVerdict *Verdict `json:"reportVerdict"`

	TerminationReason            string `json:"terminationReason"` // max-turns|timeout|rate-limit|signal|exit-code|""
	TerminationHint              string `json:"terminationHint"`
	TerminationObservedTurnLimit *int   `json:"terminationObservedTurnLimit"`
	LogPath                      string `json:"logPath"`
	// Adjudicated lists markers rejected for their format only and
	// accepted because the run exited 0 with every declared file on disk.
	Adjudicated []Adjudication `json:"adjudicated,omitempty"`
	// Usage is what the run spent, as its runner metered the agent's
	// output (runtime.json's final figure); null when nothing reported.
	Usage *usage.Usage `json:"usage"`
}

// Summarize builds the summary of one run.
func Summarize(in SummaryInput) Summary {
	s := Summary{
		PromptHash: in.PromptHash,
		Attempt:    in.Attempt,
		ExitCode:   in.ExitCode,
		Signal:     in.Signal,
		Signals:    ParseLog(in.Log),
		LogPath:    in.LogPath,
	}
	if !in.CompletedAt.IsZero() {
		t := in.CompletedAt
		s.CompletedAt = &t
	}
	a := in.Agent
	if a == nil {
		a = &wave.Agent{}
	}
	s.AgentID = a.ID
	s.Deliverables = []FileCheck{}
	for _, d := range a.Deliverables {
		s.Deliverables = append(s.Deliverables, checkFile(in.FS, d))
	}
	s.ProofArtifacts = []FileCheck{}
	for _, pa := range a.ProofArtifacts {
		c := checkFile(in.FS, pa.Path)
		if pa.Kind != nil {
			c.Kind = *pa.Kind
		}
		c.RequiredFor = pa.RequiredFor
		s.ProofArtifacts = append(s.ProofArtifacts, c)
	}
	s.ReportPath = in.ReportPath
	if s.ReportPath == "" {
		s.ReportPath = reportPath(a, in.Bindings)
	}
	if s.ReportPath != "" {
		c := checkFile(in.FS, s.ReportPath)
		// A report older than the run is a previous run's verdict, not
		// this one's (a second of slack covers coarse file times).
		stale := c.Exists && !in.StartedAt.IsZero() && c.ModifiedAt != nil &&
			c.ModifiedAt.Before(in.StartedAt.Add(-time.Second))
		s.ReportStale = stale
		s.ReportExists = c.Exists && !stale
		if s.ReportExists {
			if b, err := fs.ReadFile(in.FS, fsPath(s.ReportPath)); err == nil {
				s.ReportVerdict = ReportVerdict(string(b))
			}
		}
	}
	adjudicate(&s)
	s.TerminationReason, s.TerminationHint, s.TerminationObservedTurnLimit = termination(StripANSI(tail(in.Log, 4*MaxLogChars)), in.ExitCode, in.Signal)
	return s
}

func reportPath(a *wave.Agent, b roles.Bindings) string {
	switch {
	case a.ID == b.ContQa:
		return roles.ContQaReportPath(a)
	case a.ID == b.ContEval:
		return roles.ContEvalReportPath(a)
	case slices.Contains(b.SecurityReviewers, a.ID):
		return roles.SecurityReportPath(a)
	case b.RuntimeRole(a) == roles.RoleDesign:
		return roles.DesignPacketPath(a)
	}
	return ""
}

func fsPath(p string) string {
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	return path.Clean(strings.TrimPrefix(p, "./"))
}

func checkFile(fsys fs.FS, p string) FileCheck {
	c := FileCheck{Path: p}
	fp := fsPath(p)
	if fsys == nil || !fs.ValidPath(fp) {
		return c
	}
	if st, err := fs.Stat(fsys, fp); err == nil {
		c.Exists = true
		if t := st.ModTime(); !t.IsZero() {
			c.ModifiedAt = &t
		}
	}
	return c
}

var reportVerdictRe = regexp.MustCompile(`(?i)^Verdict:[ \t]*(PASS|CONCERNS|BLOCKED|HOLD|FAIL)\b[ \t]*[-:]?[ \t]*(.*)$`)

// ReportVerdict returns the first `Verdict: X` line of a report. Reports
// are append-only with the newest section first, so the first line wins.
// The detail never extends past the end of its line.
func ReportVerdict(text string) *Verdict {
	for _, line := range strings.Split(text, "\n") {
		m := reportVerdictRe.FindStringSubmatch(strings.TrimSpace(strings.TrimRight(line, "\r")))
		if m != nil {
			return &Verdict{Verdict: strings.ToLower(m[1]), Detail: strings.TrimSpace(m[2])}
		}
	}
	return nil
}

var (
	maxTurnsRe  = regexp.MustCompile(`(?i)Reached max turns \((\d+)\)`)
	timedOutRe  = regexp.MustCompile(`(?i)timed out(?: after [^\n.]+)?`)
	rateLimitRe = regexp.MustCompile(`(?i)rate limit|429 too many requests`)
)

// termination explains how a run ended, for failure details.
func termination(log string, code *int, signal string) (reason, hint string, turns *int) {
	if m := maxTurnsRe.FindStringSubmatch(log); m != nil {
		n, _ := strconv.Atoi(m[1])
		return "max-turns", m[0], &n
	}
	if m := timedOutRe.FindString(log); m != "" {
		return "timeout", strings.TrimSpace(m), nil
	}
	if signal != "" {
		return "signal", "terminated by " + signal, nil
	}
	if code != nil && *code != 0 {
		if m := rateLimitRe.FindString(log); m != "" {
			return "rate-limit", fmt.Sprintf("exit code %d after %s", *code, m), nil
		}
		return "exit-code", fmt.Sprintf("exit code %d", *code), nil
	}
	return "", "", nil
}
