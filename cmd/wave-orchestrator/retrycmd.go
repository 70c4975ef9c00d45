package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/retry"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

func newRetryCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "retry", Short: "Ask the next launch of a wave to rerun a phase or agents (retry overrides)",
		Long: `A retry override says what the next launch or resume of a wave reruns
instead of its own selection: a phase (and every later closure stage) and/or
agents, as resume --phase/--agent would. It is used once: removed when the
wave run that followed it ends (a launcher killed mid-run and started again
follows it again). A command line naming --phase, --agent or --rerun-proven
wins over it and leaves it pending.`,
		Example: `  wave-orchestrator retry apply --wave 1 --resume-phase integrating --reason "integration report stale"
  wave-orchestrator retry show --wave 1
  wave-orchestrator retry clear --wave 1`}
	c.AddCommand(newRetryApplyCmd(g), newRetryShowCmd(g), newRetryClearCmd(g))
	return c
}

// retryWave resolves wave n of the lane: its agent ids and override path.
func retryWave(g *globals, n int) (*laneEnv, *wave.Wave, string, error) {
	if n < 0 {
		return nil, nil, "", usageError{errors.New("--wave is required")}
	}
	e, err := openLane(g)
	if err != nil {
		return nil, nil, "", err
	}
	ws, err := e.loadWaves()
	if err != nil {
		return nil, nil, "", err
	}
	var have []string
	for _, w := range ws {
		if w.Number == n {
			return e, w, retry.OverridePath(e.layout.WaveDir(n)), nil
		}
		have = append(have, fmt.Sprint(w.Number))
	}
	return nil, nil, "", usageError{fmt.Errorf("lane %s has no wave %d; its waves are %s", e.lane.Name, n, strings.Join(have, ", "))}
}

func newRetryApplyCmd(g *globals) *cobra.Command {
	var n int
	var o retry.Override
	c := &cobra.Command{
		Use:   "apply",
		Short: "Record what the next launch of wave N reruns",
		Example: `  wave-orchestrator retry apply --wave 0 --agent A2 --agent A3
  wave-orchestrator retry apply -w 0 --resume-phase cont-qa-closure --requested-by alice --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, w, path, err := retryWave(g, n)
			if err != nil {
				return err
			}
			var ids []string
			for _, a := range w.Agents {
				ids = append(ids, a.ID)
			}
			o.SchemaVersion, o.Kind, o.Lane, o.Wave, o.ApplyOnce = 1, retry.OverrideKind, e.lane.Name, n, true
			o.CreatedAt = time.Now().UTC()
			if o.SelectedAgentIDs == nil {
				o.SelectedAgentIDs = []string{}
			}
			if err := o.Check(ids); err != nil {
				return usageError{fmt.Errorf("retry apply --wave %d: %w", n, err)}
			}
			if err := retry.WriteOverride(path, o); err != nil {
				return err
			}
			if g.json {
				return json.NewEncoder(c.OutOrStdout()).Encode(o)
			}
			fmt.Fprintf(c.OutOrStdout(), "wave %d: retry override recorded; the next launch or resume of the wave follows it\n", n)
			printOverride(c.OutOrStdout(), &o)
			return nil
		},
	}
	waveVar(c, &n, "wave", "w", -1, "wave `N` (required)")
	c.Flags().StringSliceVarP(&o.SelectedAgentIDs, "agent", "a", nil, "rerun agent `ID` (repeatable or comma-joined)")
	_ = c.RegisterFlagCompletionFunc("agent", completeAgents)
	c.Flags().StringVar(&o.ResumePhase, "resume-phase", "", "rerun this phase and every later closure stage: "+strings.Join(roles.Phases, ", "))
	_ = c.RegisterFlagCompletionFunc("resume-phase", completePhases)
	c.Flags().StringVar(&o.RequestedBy, "requested-by", defaultOperator(), "who asks (recorded)")
	c.Flags().StringVar(&o.Reason, "reason", "", "why (recorded)")
	c.Flags().BoolVar(&g.json, "json", false, "print the override as JSON")
	return c
}

// defaultOperator names the person running the command: $USER, else
// the account's name (cron, a container or `env -i` leave $USER unset),
// else "human-operator".
func defaultOperator() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "human-operator"
}

func newRetryShowCmd(g *globals) *cobra.Command {
	var n int
	c := &cobra.Command{
		Use:     "show",
		Short:   "Print wave N's pending retry override",
		Example: "  wave-orchestrator retry show --wave 0\n  wave-orchestrator retry show -w 0 --json",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, _, path, err := retryWave(g, n)
			if err != nil {
				return err
			}
			o, err := retry.ReadOverride(path)
			if err != nil {
				return err
			}
			if g.json {
				return json.NewEncoder(c.OutOrStdout()).Encode(o) // null when none
			}
			if o == nil {
				fmt.Fprintf(c.OutOrStdout(), "wave %d: no retry override pending\n", n)
				return nil
			}
			printOverride(c.OutOrStdout(), o)
			return nil
		},
	}
	waveVar(c, &n, "wave", "w", -1, "wave `N` (required)")
	c.Flags().BoolVar(&g.json, "json", false, "print the override as JSON (null when none)")
	return c
}

func newRetryClearCmd(g *globals) *cobra.Command {
	var n int
	c := &cobra.Command{
		Use:     "clear",
		Short:   "Remove wave N's pending retry override",
		Example: "  wave-orchestrator retry clear --wave 0",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, _, path, err := retryWave(g, n)
			if err != nil {
				return err
			}
			err = os.Remove(path)
			switch {
			case errors.Is(err, os.ErrNotExist):
				fmt.Fprintf(c.OutOrStdout(), "wave %d: no retry override pending\n", n)
			case err != nil:
				return fmt.Errorf("retry override %s: %w", path, err)
			default:
				fmt.Fprintf(c.OutOrStdout(), "wave %d: retry override cleared\n", n)
			}
			return nil
		},
	}
	waveVar(c, &n, "wave", "w", -1, "wave `N` (required)")
	return c
}

func printOverride(w io.Writer, o *retry.Override) {
	e := termtext.Escape
	phase := o.ResumePhase
	if phase == "" {
		phase = "(the resume plan's)"
	}
	fmt.Fprintf(w, "wave=%d phase=%s agents=%s requested_by=%s created_at=%s\n", o.Wave, phase,
		e(strings.Join(o.SelectedAgentIDs, ",")), e(o.RequestedBy), o.CreatedAt.Format(time.RFC3339))
	if o.Reason != "" {
		fmt.Fprintln(w, "reason:", e(o.Reason))
	}
}
