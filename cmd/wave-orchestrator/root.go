package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// globals are the persistent flags every command sees.
type globals struct {
	repoRoot string
	lane     string
	json     bool
	// flags are the running command's flags; those bound to config keys
	// (bindConfig) reach config.Load.
	flags *pflag.FlagSet
	// envWarned: unknown WAVE_* variables were reported (once per
	// process: the dashboard reloads the lane on every change).
	envWarned bool
}

// usageError marks flag/argument errors (exit 2).
type usageError struct{ error }

func isUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.HasPrefix(err.Error(), "unknown command") || strings.Contains(err.Error(), "flag needs an argument") ||
		strings.HasPrefix(err.Error(), "invalid argument")
}

// newRootCmd builds the command tree for args (the command line after
// the program name): the root with the one subcommand args name, or with
// all of them (see namedCommand).
func newRootCmd(args ...string) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "wave-orchestrator",
		Short:         "Run fleets of AI coding agents in waves, each in its own tmux session",
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  wave-orchestrator init && wave-orchestrator doctor
  wave-orchestrator launch --lane main
  wave-orchestrator status --json
  wave-orchestrator attach --agent A1
  wave-orchestrator resume --wave 0 --phase security-review`,
	}
	root.PersistentPreRun = func(c *cobra.Command, _ []string) { g.flags = c.Flags() }
	// --version is ours, not cobra's: cobra prints a custom version line
	// through text/template, whose reflective method calls keep the linker
	// from dropping unused methods (11 MB of the Kubernetes API types).
	root.Flags().BoolP("version", "v", false, "print the version line and exit (the version command says more)")
	root.RunE = func(c *cobra.Command, _ []string) error {
		if v, _ := c.Flags().GetBool("version"); v {
			_, err := fmt.Fprintln(c.OutOrStdout(), readBuildInfo().short())
			return err
		}
		return c.Help()
	}
	root.PersistentFlags().StringVar(&g.repoRoot, "repo-root", "", "repository root (default: $WAVE_REPO_ROOT, else the nearest directory up from here with wave.config.*, else the git top level, else here)")
	root.PersistentFlags().StringVarP(&g.lane, "lane", "l", "", "lane name (default: config defaultLane, main)")
	_ = root.RegisterFlagCompletionFunc("lane", completeLanes)
	cmds := subcommands(g)
	if make, ok := cmds[namedCommand(args)]; ok {
		root.AddCommand(make())
		refuseMistypes(root)
		return root
	}
	for _, name := range commandOrder {
		root.AddCommand(cmds[name]())
	}
	addBuiltinExamples(root)
	refuseMistypes(root)
	return root
}

// commandOrder is the order subcommands are added in (help lists them
// sorted either way).
var commandOrder = []string{"version", "agent-run", "local", "local-worker", "launch", "resume", "submit",
	"autonomous", "submit-watch", "wait", "signal", "coord", "control", "retry", "init", "doctor", "stop",
	"status", "dashboard", "attach", "backlog", "serve", "usage", "ask", "feedback", "questions", "answer", "mcp", "skill"}

// subcommands makes each subcommand by its name.
func subcommands(g *globals) map[string]func() *cobra.Command {
	return map[string]func() *cobra.Command{
		"version": newVersionCmd, "agent-run": newAgentRunCmd, "local": newLocalCmd, "local-worker": newLocalWorkerCmd,
		"launch": func() *cobra.Command { return newLaunchCmd(g) }, "resume": func() *cobra.Command { return newResumeCmd(g) },
		"submit": func() *cobra.Command { return newSubmitCmd(g) }, "autonomous": func() *cobra.Command { return newAutonomousCmd(g) },
		"submit-watch": func() *cobra.Command { return newSubmitWatchCmd(g) }, "wait": func() *cobra.Command { return newWaitCmd(g) },
		"signal": newSignalCmd, "coord": func() *cobra.Command { return newCoordCmd(g) },
		"control": func() *cobra.Command { return newControlCmd(g) }, "retry": func() *cobra.Command { return newRetryCmd(g) },
		"init": func() *cobra.Command { return newInitCmd(g) }, "doctor": func() *cobra.Command { return newDoctorCmd(g) },
		"stop": func() *cobra.Command { return newStopCmd(g) }, "status": func() *cobra.Command { return newStatusCmd(g) },
		"dashboard": func() *cobra.Command { return newDashboardCmd(g) }, "attach": func() *cobra.Command { return newAttachCmd(g) },
		"backlog": func() *cobra.Command { return newBacklogCmd(g) }, "serve": func() *cobra.Command { return newServeCmd(g) },
		"usage": func() *cobra.Command { return newUsageCmd(g) }, "ask": func() *cobra.Command { return newAskCmd(g) },
		"feedback": func() *cobra.Command { return newFeedbackCmd(g) }, "questions": func() *cobra.Command { return newQuestionsCmd(g) },
		"answer": func() *cobra.Command { return newAnswerCmd(g) },
		"mcp":    func() *cobra.Command { return newMCPCmd(g) }, "skill": func() *cobra.Command { return newSkillCmd(g) },
	}
}

// namedCommand is the subcommand a command line starts with, when that
// alone is what it runs: then only that command is built (the whole tree
// costs every invocation about half a millisecond). "" — a global flag
// first, help, completion, a misspelt command that wants suggestions —
// builds the whole tree.
func namedCommand(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}

// addBuiltinExamples gives cobra's own help and completion commands the
// Examples section every command has.
func addBuiltinExamples(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  wave-orchestrator help launch"
		case "completion":
			c.Example = "  source <(wave-orchestrator completion bash)\n  wave-orchestrator completion zsh > \"${fpath[1]}/_wave-orchestrator\""
			use := map[string]string{
				"bash":       "source <(wave-orchestrator completion bash)",
				"zsh":        `wave-orchestrator completion zsh > "${fpath[1]}/_wave-orchestrator"`,
				"fish":       "wave-orchestrator completion fish | source",
				"powershell": "wave-orchestrator completion powershell | Out-String | Invoke-Expression",
			}
			for _, sh := range c.Commands() {
				sh.Example = "  " + use[sh.Name()]
			}
		}
	}
}

// root resolves the repository root: --repo-root, else $WAVE_REPO_ROOT,
// else found from the current directory (config.RepoRoot).
func (g *globals) root() (string, error) {
	return config.RepoRoot(g.repoRoot, os.Getenv, os.Getwd)
}
