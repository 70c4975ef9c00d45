package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// doctorReport is `doctor --json` (docs/doctor-schema.md). errors and
// warnings repeat the messages of the error and warn findings, for a
// caller that only wants to print them.
type doctorReport struct {
	OK            bool                `json:"ok"`
	WorkspaceRoot string              `json:"workspaceRoot"`
	Errors        []string            `json:"errors"`
	Warnings      []string            `json:"warnings"`
	Findings      []doctorFindingJSON `json:"findings"`
}

type doctorFindingJSON struct {
	Level   string `json:"level"`
	Check   string `json:"check"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// newDoctorReport turns findings into the JSON report. Lists are never
// null, so `jq '.errors[]'` works on a clean run.
func newDoctorReport(root string, fs []finding) doctorReport {
	r := doctorReport{WorkspaceRoot: root, Errors: []string{}, Warnings: []string{}, Findings: []doctorFindingJSON{}}
	for _, f := range fs {
		msg := oneLine(f.msg)
		r.Findings = append(r.Findings, doctorFindingJSON{Level: f.level, Check: checkName(f), Message: msg, Fix: f.fix})
		switch f.level {
		case "error":
			r.Errors = append(r.Errors, msg)
		case "warn":
			r.Warnings = append(r.Warnings, msg)
		}
	}
	r.OK = len(r.Errors) == 0
	return r
}

// checkName is the finding's check, else the word its message starts
// with ("tmux: 3.4" is check tmux).
func checkName(f finding) string {
	if f.check != "" {
		return f.check
	}
	head, _, _ := strings.Cut(f.msg, ":")
	if i := strings.IndexByte(head, ' '); i > 0 {
		head = head[:i]
	}
	return head
}

// printFindingsJSON writes the report and exits as the text form does:
// 1 when any finding is an error.
func printFindingsJSON(w io.Writer, root string, fs []finding) error {
	r := newDoctorReport(root, fs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	if !r.OK {
		return withCode(exitcode.Failed, fmt.Errorf("doctor: %d error(s)", len(r.Errors)))
	}
	return nil
}
