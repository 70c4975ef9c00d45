// Package skill owns what `wave-orchestrator skill install` writes for
// Claude Code: the skill that tells a host agent how to run this tool end
// to end (SKILL.md, in our own words), and the project's MCP server entry
// in .mcp.json, merged with the servers already there. It writes nothing
// it would change without being asked: a file that differs from what it
// would write is refused unless Force, and a refusal writes no file.
package skill

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// Name is the skill's name and directory, and the MCP server's name.
const Name = "wave-orchestrator"

//go:embed SKILL.md
var text []byte

// Text is the skill file as installed.
func Text() []byte { return text }

// Options say where to install and what to register.
type Options struct {
	// SkillsDir is the skills directory: <project>/.claude/skills, or
	// the user's (~/.claude/skills).
	SkillsDir string
	// MCPConfig is the project's .mcp.json; "" registers no server.
	MCPConfig string
	// Command is the binary the server entry starts.
	Command string
	// AllowWrite registers the server with its write tools.
	AllowWrite bool
	// Force overwrites a skill file or server entry that differs.
	Force bool
}

// Change is what Install did to one file: created, updated or
// unchanged.
type Change struct {
	Path, Action string
}

// ChangedError is a file Install would change and did not: it differs
// from what it would write and Force was not given.
type ChangedError struct {
	Path, What string
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("%s: %s differs from what `skill install` writes; not changed (give --force to overwrite it)", e.Path, e.What)
}

// SkillPath is the skill file under dir.
func SkillPath(dir string) string { return filepath.Join(dir, Name, "SKILL.md") }

// Install writes the skill and the server entry. Every file is checked
// before any is written, so a refusal (a changed file, a .mcp.json that
// is no JSON object) leaves all of them as they were.
func Install(o Options) ([]Change, error) {
	type write struct {
		path   string
		data   []byte
		action string
	}
	var plan []write
	var refused []error
	skillPath := SkillPath(o.SkillsDir)
	switch old, err := os.ReadFile(skillPath); {
	case errors.Is(err, os.ErrNotExist):
		plan = append(plan, write{skillPath, text, "created"})
	case err != nil:
		return nil, fmt.Errorf("skill install: %w", err)
	case string(old) == string(text):
		plan = append(plan, write{skillPath, nil, "unchanged"})
	case o.Force:
		plan = append(plan, write{skillPath, text, "updated"})
	default:
		refused = append(refused, &ChangedError{Path: skillPath, What: "the skill file"})
	}
	if o.MCPConfig != "" {
		old, err := os.ReadFile(o.MCPConfig)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("skill install: %w", err)
		}
		out, action, err := MergeMCPConfig(old, Entry(o.Command, o.AllowWrite), o.Force)
		var ce *ChangedError
		switch {
		case errors.As(err, &ce):
			ce.Path = o.MCPConfig
			refused = append(refused, ce)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", o.MCPConfig, err)
		default:
			plan = append(plan, write{o.MCPConfig, out, action})
		}
	}
	if len(refused) > 0 {
		return nil, errors.Join(refused...)
	}
	var done []Change
	for _, w := range plan {
		if w.data != nil {
			if err := os.MkdirAll(filepath.Dir(w.path), 0o755); err != nil {
				return done, fmt.Errorf("skill install: %w", err)
			}
			if err := jsonfile.WriteFileAtomic(w.path, w.data, 0o644); err != nil {
				return done, fmt.Errorf("skill install: %w", err)
			}
		}
		done = append(done, Change{Path: w.path, Action: w.action})
	}
	return done, nil
}

// Entry is the server entry .mcp.json gets: a stdio server running
// `<command> mcp`, with --allow-write when asked. It names no repository:
// the server finds it from the directory Claude Code starts it in.
func Entry(command string, allowWrite bool) map[string]any {
	args := []any{"mcp"}
	if allowWrite {
		args = append(args, "--allow-write")
	}
	return map[string]any{"type": "stdio", "command": command, "args": args}
}

// Describe is the one-line account of a change for the person.
func Describe(c Change) string {
	return strings.Join([]string{c.Action, c.Path}, " ")
}
