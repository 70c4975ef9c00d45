package localagent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/roles"
)

// writeFiles writes the role's report (always: it is this run's result)
// and every deliverable that does not exist yet.
func writeFiles(root string, t task, o options, out io.Writer) error {
	report := t.facts["report"]
	if report != "" {
		p, err := safePath(root, report)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if err := write(p, reportText(t, o)); err != nil {
			return err
		}
		fmt.Fprintf(out, "[local-agent] wrote report %s\n", report)
	}
	for _, d := range t.deliverables {
		if d == report || strings.HasSuffix(d, "/") {
			continue
		}
		p, err := safePath(root, d)
		if err != nil {
			return fmt.Errorf("deliverable: %w", err)
		}
		if _, err := os.Stat(p); err == nil {
			fmt.Fprintf(out, "[local-agent] exists %s\n", d)
			continue
		}
		if err := write(p, stub(d, t.facts["agent"])); err != nil {
			return err
		}
		fmt.Fprintf(out, "[local-agent] created %s\n", d)
	}
	return nil
}

func write(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create directory for %s: %w", path, err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func reportText(t task, o options) string {
	agent := t.facts["agent"]
	md := func(title string, sections ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n\nWritten by the wave-orchestrator local agent for %s.\n", title, agent)
		for _, s := range sections {
			fmt.Fprintf(&b, "\n## %s\n\n- Simulated run: nothing to report.\n", s)
		}
		return b.String()
	}
	switch t.facts["role"] {
	case roles.RoleContQa:
		return "Verdict: " + o.verdict + "\n\n" + md("cont-QA report", "Gate summary")
	case roles.RoleSecurity:
		text := md("Security review", "Threat Model", "Risky Surfaces", "Findings", "Required Approvals", "Requested Fixes")
		return text + fmt.Sprintf("\n## Final Disposition\n\n- state=%s findings=%d approvals=0\n", o.security, findings(o.security))
	case roles.RoleDesign:
		return md("Design packet", "Problem", "Constraints", "Decisions", "Assumptions", "Open Questions",
			"Interface Impacts", "Validation Plan", "Implementation Handoff")
	case roles.RoleContEval:
		return md("cont-EVAL report", "Benchmarks", "Commands", "Gaps and regressions") + "\n" + evalMarker(t) + "\n"
	}
	return md("Report")
}

var nonIdent = regexp.MustCompile(`[^a-z0-9_]+`)

// stub is placeholder content for a deliverable, shaped by its extension
// so that it at least parses as that kind of file.
func stub(rel, agent string) string {
	note := fmt.Sprintf("Placeholder written by the wave-orchestrator local agent for %s.", agent)
	switch strings.ToLower(filepath.Ext(rel)) {
	case ".md", ".mdx", ".txt":
		title := strings.TrimSuffix(filepath.Base(rel), filepath.Ext(rel))
		return fmt.Sprintf("# %s\n\n%s\n", title, note)
	case ".go":
		pkg := strings.Trim(nonIdent.ReplaceAllString(strings.ToLower(filepath.Base(filepath.Dir(rel))), "_"), "_")
		if pkg == "" || pkg == "." || (pkg[0] >= '0' && pkg[0] <= '9') {
			pkg = "main"
		}
		return fmt.Sprintf("// %s\n\npackage %s\n", note, pkg)
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx":
		return fmt.Sprintf("// %s\nexport {};\n", note)
	case ".json":
		return "{}\n"
	case ".py", ".sh", ".yaml", ".yml", ".toml", ".rb":
		return "# " + note + "\n"
	}
	return note + "\n"
}
