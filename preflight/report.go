package preflight

// Report is `doctor --json` (docs/doctor-schema.md). Errors and Warnings
// repeat the messages of the error and warn findings, for a caller that
// only wants to print them.
type Report struct {
	OK            bool            `json:"ok"`
	WorkspaceRoot string          `json:"workspaceRoot"`
	Errors        []string        `json:"errors"`
	Warnings      []string        `json:"warnings"`
	Findings      []ReportFinding `json:"findings"`
}

// ReportFinding is one finding in the report, on one line.
type ReportFinding struct {
	Level   Level  `json:"level"`
	Check   string `json:"check"`
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

// NewReport turns findings into the JSON report. Lists are never null,
// so `jq '.errors[]'` works on a clean run.
func NewReport(root string, fs []Finding) Report {
	r := Report{WorkspaceRoot: root, Errors: []string{}, Warnings: []string{}, Findings: []ReportFinding{}}
	for _, f := range fs {
		msg := Flat(f.Msg)
		r.Findings = append(r.Findings, ReportFinding{Level: f.Level, Check: f.Name(), Message: msg, Fix: f.Fix})
		switch f.Level {
		case LevelError:
			r.Errors = append(r.Errors, msg)
		case LevelWarn:
			r.Warnings = append(r.Warnings, msg)
		}
	}
	r.OK = len(r.Errors) == 0
	return r
}
