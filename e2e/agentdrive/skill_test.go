package agentdrive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// skillDescription is a phrase of the installed skill's description,
// which Claude Code shows the model so that it picks the skill.
const skillDescription = "dispatch a wave of issues"

// `skill install` sets a project up for Claude Code: the real CLI lists
// the registered server (pending the person's approval, then, approved,
// connected: it started our server and spoke to it), offers the model
// the skill by its description and the server's tools, and a second
// install changes nothing.
func TestClaudeCodeSeesTheInstalledSkillAndServer(t *testing.T) {
	t.Parallel()
	c := newClaude(t)
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	res := r.Run(e2etest.Context(t), "skill", "install")
	if res.Code != 0 || !strings.Contains(res.Stdout, "created "+filepath.Join(r.Root, ".mcp.json")) {
		t.Fatalf("skill install: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if out := c.run(r.Root, "mcp", "list"); !strings.Contains(out, server+": "+e2etest.Bin()+" mcp") || !strings.Contains(out, "Pending approval") {
		t.Fatalf("claude mcp list before approval:\n%s", out)
	}
	// The person approves the project's server once (what Claude Code's
	// prompt records).
	r.Write(".claude/settings.local.json", `{"enabledMcpjsonServers": ["`+server+`"]}`)
	if out := c.run(r.Root, "mcp", "list"); !strings.Contains(out, server+": ") || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list after approval:\n%s", out)
	}
	c.model.ScriptTools("Run a wave for me", []e2etest.ToolStep{{Tool: tool("status"), Input: fixed(map[string]any{})}}, "Here is the lane.")
	c.run(r.Root, "-p", "Run a wave for me", "--allowedTools", tool("status"))
	sawSkill := false
	for _, b := range c.model.Bodies() {
		sawSkill = sawSkill || strings.Contains(b, skillDescription)
	}
	if !sawSkill {
		t.Fatalf("no request to the model mentions the skill's description %q", skillDescription)
	}
	if !c.offered()[tool("status")] {
		t.Fatalf("the model was not offered the server's tools from .mcp.json: %v", c.offered())
	}
	if rs := c.results(1); rs[0].IsError || !strings.Contains(rs[0].Text, `"lane": "main"`) {
		t.Fatalf("status through the installed server: %+v", rs[0])
	}
	again := r.Run(e2etest.Context(t), "skill", "install")
	if again.Code != 0 || strings.Count(again.Stdout, "unchanged ") != 2 {
		t.Fatalf("second install: %d\n%s%s", again.Code, again.Stdout, again.Stderr)
	}
}

// An edited skill is never overwritten silently: install refuses, naming
// the file and --force, and changes no file; --force replaces it.
func TestSkillInstallRefusesAnEditedSkillWithoutForce(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	ctx := e2etest.Context(t)
	if res := r.Run(ctx, "skill", "install", "--allow-write"); res.Code != 0 {
		t.Fatalf("install: %d %s", res.Code, res.Stderr)
	}
	path := filepath.Join(r.Root, ".claude", "skills", server, "SKILL.md")
	r.Write(".claude/skills/"+server+"/SKILL.md", "my own notes\n")
	mcpBefore, _ := os.ReadFile(filepath.Join(r.Root, ".mcp.json"))
	res := r.Run(ctx, "skill", "install")
	if res.Code != 1 || !strings.Contains(res.Stderr, path) || !strings.Contains(res.Stderr, "--force") {
		t.Fatalf("install over an edited skill: %d\n%s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stderr, ".mcp.json") {
		t.Fatalf("the changed server entry (read-only now, --allow-write before) is not named:\n%s", res.Stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "my own notes\n" {
		t.Fatalf("the edited skill was changed: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(r.Root, ".mcp.json")); string(b) != string(mcpBefore) {
		t.Fatalf(".mcp.json changed by a refused install:\n%s", b)
	}
	if res := r.Run(ctx, "skill", "install", "--force"); res.Code != 0 || !strings.Contains(res.Stdout, "updated "+path) {
		t.Fatalf("install --force: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if res := r.Run(ctx, "skill", "install", "--project", "--user"); res.Code != e2etest.ExitUsage {
		t.Fatalf("--project --user: %d, want a usage error", res.Code)
	}
}

// `skill install --user` puts the skill in Claude Code's user directory
// ($CLAUDE_CONFIG_DIR/skills), where Claude Code offers it in a project
// that has none of its own.
func TestClaudeCodeSeesAUserSkill(t *testing.T) {
	t.Parallel()
	c := newClaude(t)
	r := e2etest.NewRepo(t)
	res := r.RunWith(e2etest.Context(t), []string{"CLAUDE_CONFIG_DIR=" + c.config}, "skill", "install", "--user")
	want := filepath.Join(c.config, "skills", server, "SKILL.md")
	if res.Code != 0 || !strings.Contains(res.Stdout, "created "+want) {
		t.Fatalf("skill install --user: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(filepath.Join(r.Root, ".claude", "skills")); !os.IsNotExist(err) {
		t.Fatalf("--user wrote a project skill too: %v", err)
	}
	c.run(r.Root, "-p", "Supervise the wave")
	for _, b := range c.model.Bodies() {
		if strings.Contains(b, skillDescription) {
			return
		}
	}
	t.Fatalf("no request to the model mentions the user skill's description %q", skillDescription)
}
