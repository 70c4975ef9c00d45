package skill

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func install(t *testing.T, root string, force bool) ([]Change, error) {
	t.Helper()
	return Install(Options{SkillsDir: filepath.Join(root, ".claude", "skills"), MCPConfig: filepath.Join(root, ".mcp.json"),
		Command: "/opt/bin/wave-orchestrator", Force: force})
}

func actions(cs []Change) string {
	var s []string
	for _, c := range cs {
		s = append(s, c.Action+" "+filepath.Base(c.Path))
	}
	return strings.Join(s, ", ")
}

// Installing twice changes nothing the second time; the project's other
// MCP servers stay.
func TestInstallIsIdempotentAndKeepsOtherServers(t *testing.T) {
	root := t.TempDir()
	other := `{"mcpServers": {"db": {"command": "db-mcp", "args": ["--ro"]}}, "extra": 1}`
	if err := os.WriteFile(filepath.Join(root, ".mcp.json"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := install(t, root, false)
	if err != nil || actions(cs) != "created SKILL.md, updated .mcp.json" {
		t.Fatalf("first install: %v %s", err, actions(cs))
	}
	before, _ := os.ReadFile(filepath.Join(root, ".mcp.json"))
	cs, err = install(t, root, false)
	if err != nil || actions(cs) != "unchanged SKILL.md, unchanged .mcp.json" {
		t.Fatalf("second install: %v %s", err, actions(cs))
	}
	after, _ := os.ReadFile(filepath.Join(root, ".mcp.json"))
	if string(before) != string(after) {
		t.Fatalf(".mcp.json rewritten:\n%s\n%s", before, after)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
		Extra int `json:"extra"`
	}
	if err := json.Unmarshal(after, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Extra != 1 || cfg.MCPServers["db"].Command != "db-mcp" || cfg.MCPServers[Name].Command != "/opt/bin/wave-orchestrator" ||
		strings.Join(cfg.MCPServers[Name].Args, " ") != "mcp" {
		t.Fatalf(".mcp.json: %s", after)
	}
}

// An edited skill file is refused by name with the flag that overrides
// it, and nothing else is written either; --force replaces it.
func TestAChangedSkillIsRefusedWithoutForceAndNothingIsWritten(t *testing.T) {
	root := t.TempDir()
	path := SkillPath(filepath.Join(root, ".claude", "skills"))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("my own notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := install(t, root, false)
	var ce *ChangedError
	if !errors.As(err, &ce) || ce.Path != path || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("install over an edited skill: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "my own notes\n" {
		t.Fatalf("the edited skill was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(root, ".mcp.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused install wrote .mcp.json: %v", err)
	}
	cs, err := install(t, root, true)
	if err != nil || actions(cs) != "updated SKILL.md, created .mcp.json" {
		t.Fatalf("forced install: %v %s", err, actions(cs))
	}
	if b, _ := os.ReadFile(path); string(b) != string(Text()) {
		t.Fatal("--force did not write the skill")
	}
}

// The skill's front matter names it and lists the phrases that should
// make Claude Code reach for it; its body says the rules that matter.
func TestTheSkillNamesItsTriggersAndItsRules(t *testing.T) {
	s := string(Text())
	front, body, ok := strings.Cut(strings.TrimPrefix(s, "---\n"), "\n---\n")
	if !strings.HasPrefix(s, "---\n") || !ok {
		t.Fatalf("no front matter:\n%s", s)
	}
	if !strings.Contains(front, "name: "+Name+"\n") {
		t.Errorf("front matter has no name %s:\n%s", Name, front)
	}
	for _, phrase := range []string{"run a wave", "dispatch a wave of issues", "work the backlog", "supervise the wave", "merge the wave back"} {
		if !strings.Contains(front, phrase) {
			t.Errorf("description lacks %q", phrase)
		}
	}
	for _, rule := range []string{"backlog_plan", "submit", "wait", "questions", "in one message", "Merged", "In flight", "Blocked", "Needs input", "Spend", "Never merge"} {
		if !strings.Contains(body, rule) {
			t.Errorf("skill body lacks %q", rule)
		}
	}
}
