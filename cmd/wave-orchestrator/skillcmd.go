package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/skill"
)

func newSkillCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "skill",
		Short: "Install the Claude Code skill that drives this tool, and register its MCP server",
		Example: `  wave-orchestrator skill install
  wave-orchestrator skill install --user --allow-write`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newSkillInstallCmd(g))
	return c
}

func newSkillInstallCmd(g *globals) *cobra.Command {
	var project, user, allowWrite, force bool
	c := &cobra.Command{
		Use:   "install",
		Short: "Write .claude/skills/wave-orchestrator/SKILL.md and register `wave-orchestrator mcp` in the project's .mcp.json",
		Long: `Write the Claude Code skill that tells a host agent how to run this tool end
to end — plan, show the plan, run detached, watch, put the agents' questions
to the person together, report merged / in flight / blocked / needs-input and
spend, never merge by hand — to the project (.claude/skills, the default) or
to the user (--user: $CLAUDE_CONFIG_DIR/skills, else ~/.claude/skills), and
register the MCP server (` + "`wave-orchestrator mcp`" + `, read-only unless
--allow-write) in the project's .mcp.json, keeping the servers already there.
Running it again changes nothing; a skill file or server entry that differs
from what it writes (edited, or an older version) is refused, naming the
file, unless --force. Claude Code asks once before it starts a server from
.mcp.json.`,
		Example: `  wave-orchestrator skill install
  wave-orchestrator skill install --allow-write
  wave-orchestrator skill install --user
  wave-orchestrator skill install --force   # overwrite an edited skill file`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if project && user {
				return usageError{errors.New("--project and --user exclude each other: the skill goes to the project (the default) or to your user")}
			}
			root, err := g.root()
			if err != nil {
				return err
			}
			dir := filepath.Join(root, ".claude", "skills")
			if user {
				if dir, err = userSkillsDir(); err != nil {
					return err
				}
			}
			bin, err := commandForConfig()
			if err != nil {
				return err
			}
			changes, err := skill.Install(skill.Options{SkillsDir: dir, MCPConfig: filepath.Join(root, ".mcp.json"),
				Command: bin, AllowWrite: allowWrite, Force: force})
			if err != nil {
				return err
			}
			out := c.OutOrStdout()
			for _, ch := range changes {
				fmt.Fprintln(out, skill.Describe(ch))
			}
			mode := "read-only (reinstall with --allow-write for submit, answer, stop)"
			if allowWrite {
				mode = "with its write tools (submit, answer, stop)"
			}
			fmt.Fprintf(out, "Claude Code in %s now has the skill %q and the MCP server %q, %s: `claude mcp list` shows the server (approve it once when Claude Code asks)\n",
				root, skill.Name, skill.Name, mode)
			return nil
		},
	}
	c.Flags().BoolVar(&project, "project", false, "install the skill in the project's .claude/skills (the default)")
	c.Flags().BoolVar(&user, "user", false, "install the skill for your user ($CLAUDE_CONFIG_DIR/skills, else ~/.claude/skills)")
	c.Flags().BoolVar(&allowWrite, "allow-write", false, "register the server with --allow-write: the agent may submit runs, answer questions and stop")
	c.Flags().BoolVar(&force, "force", false, "overwrite a skill file or server entry that differs from what this writes")
	return c
}

// userSkillsDir is Claude Code's user skills directory.
func userSkillsDir() (string, error) {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "skills"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("--user: no home directory to install into: %w", err)
	}
	return filepath.Join(home, ".claude", "skills"), nil
}

// commandForConfig is how .mcp.json names this binary: by name when that
// name on PATH is this very file (so a checked-in .mcp.json works for
// everyone who installed it), else by its absolute path.
func commandForConfig() (string, error) {
	me, err := self()
	if err != nil {
		return "", err
	}
	if p, err := exec.LookPath("wave-orchestrator"); err == nil {
		if q, err := filepath.EvalSymlinks(p); err == nil && q == me {
			return "wave-orchestrator", nil
		}
	}
	return me, nil
}
