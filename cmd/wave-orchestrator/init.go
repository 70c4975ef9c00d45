package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/scaffold"
)

func newInitCmd(g *globals) *cobra.Command {
	var force, demo bool
	c := &cobra.Command{
		Use:   "init",
		Short: "Scaffold wave.config.yaml, a demo wave-0 and role prompts",
		Long: `Write wave.config.yaml, a demo wave (docs/plans/waves/wave-0.md: two
implementation agents and the closure roles, all on the built-in local
agent) and role prompts under docs/agents/. Existing files are never
overwritten without --force.`,
		Example: `  wave-orchestrator init
  wave-orchestrator --repo-root ~/src/my-repo init
  wave-orchestrator init --force              # overwrite the scaffolded files
  wave-orchestrator init --backlog-demo       # also three issues in docs/backlog for backlog run`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			root, err := g.root()
			if err != nil {
				return err
			}
			files, err := scaffold.Write(root, force)
			if err != nil {
				return err
			}
			if demo {
				more, err := scaffold.WriteBacklogDemo(root, force)
				if err != nil {
					return err
				}
				files = append(files, more...)
			}
			for _, f := range files {
				fmt.Fprintln(c.OutOrStdout(), "wrote", f)
			}
			fmt.Fprintln(c.OutOrStdout(), "next: wave-orchestrator doctor && wave-orchestrator launch --lane main")
			return nil
		},
	}
	c.Flags().BoolVar(&force, "force", false, "overwrite existing files")
	c.Flags().BoolVar(&demo, "backlog-demo", false, "also write a three-issue local backlog (docs/backlog) for `backlog run`")
	return c
}
