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

func newRootCmd() *cobra.Command {
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newVersionCmd(),
		newAgentRunCmd(),
		newLocalCmd(),
		newLocalWorkerCmd(),
		newLaunchCmd(g),
		newResumeCmd(g),
		newSubmitCmd(g),
		newAutonomousCmd(g),
		newSubmitWatchCmd(g),
		newWaitCmd(g),
		newSignalCmd(),
		newCoordCmd(g),
		newControlCmd(g),
		newRetryCmd(g),
		newInitCmd(g),
		newDoctorCmd(g),
		newStopCmd(g),
		newStatusCmd(g),
		newDashboardCmd(g),
		newAttachCmd(g),
		newBacklogCmd(g),
		newServeCmd(g),
		newUsageCmd(g),
	)
	root.AddCommand(newAskCmd(g), newFeedbackCmd(g), newQuestionsCmd(g), newAnswerCmd(g))
	addBuiltinExamples(root)
	return root
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
