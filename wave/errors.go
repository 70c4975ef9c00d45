package wave

import (
	"fmt"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// Problem is one thing wrong with a wave file.
type Problem struct {
	File  string `json:"file"`
	Line  int    `json:"line"` // 1-based; 0 when the problem has no line
	Agent string `json:"agent,omitempty"`
	Rule  string `json:"rule"` // short kebab id, e.g. duplicate-agent
	Msg   string `json:"msg"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Agent != "" {
		fmt.Fprintf(&b, "agent %s: ", p.Agent)
	}
	fmt.Fprintf(&b, "%s: %s", p.Rule, p.Msg)
	// Ids and messages quote the file's own text, which may be hostile.
	return termtext.Escape(b.String())
}

// Error holds every problem found in one or more wave files.
type Error struct {
	Problems []Problem
}

// Error prints one line per problem.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Has reports whether some problem carries rule.
func (e *Error) Has(rule string) bool {
	for _, p := range e.Problems {
		if p.Rule == rule {
			return true
		}
	}
	return false
}

// problems collects problems for one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(line int, agent, rule, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Agent: agent, Rule: rule, Msg: fmt.Sprintf(format, args...)})
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Problems: ps.list}
}

// appendErr merges err's problems into list; a foreign error becomes one problem.
func appendErr(list []Problem, file string, err error) []Problem {
	if err == nil {
		return list
	}
	if e, ok := err.(*Error); ok {
		return append(list, e.Problems...)
	}
	return append(list, Problem{File: file, Rule: "io", Msg: err.Error()})
}
