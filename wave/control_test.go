package wave

import (
	"errors"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// Agent ids and titles with control characters (an escape sequence, any
// C0 or C1 control, DEL) are refused naming file, line, agent and rule,
// and the message itself carries no raw control character.
func TestAgentIDsAndTitlesWithControlCharactersAreRejected(t *testing.T) {
	for _, tc := range []struct {
		name, header, rule string
	}{
		{"escape in id", "## Agent A\x1b[2J: T\n", "agent-id-control-character"},
		{"bell in id", "## Agent A\a2: T\n", "agent-id-control-character"},
		{"tab in id", "## Agent A\t2: T\n", "agent-id-control-character"},
		{"DEL in id", "## Agent A2\x7f: T\n", "agent-id-control-character"},
		{"C1 CSI in id", "## Agent A2\u009b: T\n", "agent-id-control-character"},
		{"OSC title in title", "## Agent A2: x\x1b]0;owned\a\n", "agent-title-control-character"},
		{"C1 in title", "## Agent A2: x\u0085y\n", "agent-title-control-character"},
		{"right-to-left override in id", "## Agent A\u202e2: T\n", "agent-id-control-character"},
		{"zero-width space in id", "## Agent A\u200b2: T\n", "agent-id-control-character"},
		{"isolate in title", "## Agent A2: fix \u2067login\u2069\n", "agent-title-control-character"},
	} {
		content := base + tc.header + "### Prompt\n```\nFile ownership:\n- b/\n```\n"
		_, err := Parse("docs/plans/waves/wave-1.md", []byte(content), Options{ReadFile: roleDocs(nil)})
		var e *Error
		if !errors.As(err, &e) || !e.Has(tc.rule) {
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.rule)
			continue
		}
		for _, p := range e.Problems {
			if p.Rule != tc.rule {
				continue
			}
			msg := p.String()
			if p.Line != 15 || p.Agent == "" || !strings.HasPrefix(msg, "docs/plans/waves/wave-1.md:15: agent ") || !strings.Contains(msg, tc.rule+": ") {
				t.Errorf("%s: problem %+v prints %q", tc.name, p, msg)
			}
			if termtext.HasControl(msg) {
				t.Errorf("%s: message carries a raw control character: %q", tc.name, msg)
			}
		}
	}
}

// `### Executor` env.NAME entries are read into the agent's env; a name
// that is not an environment variable name is refused with its line.
func TestExecutorEnvEntries(t *testing.T) {
	content := base + agent("A2", "### Executor\n- id: claude\n- env.IS_SANDBOX: 1\n- env.BASE_URL: `http://127.0.0.1:8080`\n- env.EMPTY: \"\"\n", "b/")
	w, err := Parse("docs/plans/waves/wave-1.md", []byte(content), Options{ReadFile: roleDocs(nil)})
	if err != nil {
		t.Fatal(err)
	}
	got := w.Agents[2].Executor.Env
	if len(got) != 3 || got["IS_SANDBOX"] != "1" || got["BASE_URL"] != "http://127.0.0.1:8080" || got["EMPTY"] != "" {
		t.Fatalf("env %v", got)
	}
	_, err = Parse("docs/plans/waves/wave-1.md", []byte(base+agent("A2", "### Executor\n- env.9LIVES: x\n", "b/")), Options{ReadFile: roleDocs(nil)})
	checkProblem(t, "bad env name", err, wantProblem{"bad-env-name", 17, "A2"})
	_, err = Parse("docs/plans/waves/wave-1.md", []byte(base+agent("A2", "### Executor\n- env.A: x\n- env.A: y\n", "b/")), Options{ReadFile: roleDocs(nil)})
	checkProblem(t, "duplicate env", err, wantProblem{"duplicate-entry", 18, "A2"})
}

// A misspelt `###` heading inside an agent section would silently drop
// what it holds; it is an error naming file, line and agent, with the
// heading it probably meant.
func TestUnknownAgentHeadingIsAnError(t *testing.T) {
	for _, tc := range []struct {
		name, extra, hint string
	}{
		{"exit contract typo", "### Exit contrac\n- completion: contract\n", `did you mean "Exit contract"`},
		{"singular deliverable", "### Deliverable\n- b/a.go\n", `did you mean "Deliverables"`},
		{"lower case", "### executor\n- id: codex\n", `did you mean "Executor"`},
		{"trailing blank", "### Deliverables \n- b/a.go\n", `did you mean "Deliverables"`},
		{"unrelated", "### Notes\nfree text\n", ""},
	} {
		_, err := Parse("docs/plans/waves/wave-1.md", []byte(base+agent("A2", tc.extra, "b/")), Options{ReadFile: roleDocs(nil)})
		checkProblem(t, tc.name, err, wantProblem{"unknown-agent-heading", 16, "A2"})
		if tc.hint != "" && (err == nil || !strings.Contains(err.Error(), tc.hint)) {
			t.Errorf("%s: %v lacks %s", tc.name, err, tc.hint)
		}
	}
	// Fenced headings are prompt text, `####` is not a subsection, and a
	// wave's own `## ` sections after the agents are not the agent's.
	ok := base + agent("A2", "#### Details\n", "b/") + "## Appendix\n### Notes\n"
	ok = strings.Replace(ok, "File ownership:\n- b/", "### Step 1\nFile ownership:\n- b/", 1)
	if _, err := Parse("docs/plans/waves/wave-1.md", []byte(ok), Options{ReadFile: roleDocs(nil)}); err != nil {
		t.Fatalf("valid headings refused: %v", err)
	}
}
