package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/control"
	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func newControlCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "control", Short: "The controller's view of a wave (control status)",
		Example: `  wave-orchestrator control status --wave 0 --json`}
	c.AddCommand(newControlStatusCmd(g))
	return c
}

func newControlStatusCmd(g *globals) *cobra.Command {
	var waveN int
	var agent, project string
	c := &cobra.Command{
		Use:   "status",
		Short: "One wave's execution, closure and controller state, blocking edge, agents and questions",
		Long: `Print one wave as the controller sees it: executionState, closureState,
controllerState, the edge it is blocked on, each agent's logical state and the
wave's requests for a person. It is a mapping of the same lane state status
--json prints (docs/status-schema.md, "control status --json").`,
		Example: `  wave-orchestrator control status --wave 0 --json
  wave-orchestrator control status -w 2 --agent A1 --json | jq .logicalAgents
  wave-orchestrator control status -w 1`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if waveN < 0 {
				return usageError{errors.New("--wave is required")}
			}
			s, err := controlStatus(c, g, waveN, agent, project)
			if err != nil {
				return err
			}
			if g.json {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			printControl(c.OutOrStdout(), s)
			return nil
		},
	}
	waveVar(c, &waveN, "wave", "w", -1, "wave `N` (required)")
	c.Flags().StringVarP(&agent, "agent", "a", "", "only agent `ID` in logicalAgents and feedbackRequests")
	_ = c.RegisterFlagCompletionFunc("agent", completeAgents)
	c.Flags().StringVar(&project, "project", "", "the workspace's project (only this workspace's project is supported)")
	c.Flags().BoolVar(&g.json, "json", false, "print JSON (schema: docs/status-schema.md)")
	return c
}

// controlStatus maps wave n of the lane state onto the controller view.
func controlStatus(c *cobra.Command, g *globals, n int, agent, project string) (control.Status, error) {
	e, err := openLane(g)
	if err != nil {
		return control.Status{}, err
	}
	if err := checkProject(project, e); err != nil {
		return control.Status{}, err
	}
	l, err := launcher.Status(c.Context(), e.layout)
	if err != nil {
		return control.Status{}, err
	}
	recs, bad, err := coord.Read(e.layout.CoordinationPath(n))
	if err != nil {
		return control.Status{}, err
	}
	for _, b := range bad {
		fmt.Fprintln(c.ErrOrStderr(), "unreadable coordination record at", b)
	}
	in := control.Input{Lane: e.lane.Name, Wave: l.FindWave(n), Number: n, Records: coord.Materialize(recs), Agent: agent}
	ws, werr := e.loadWaves()
	var ids []string
	for _, w := range ws {
		if w.Number != n {
			continue
		}
		b := roles.Bind(w, e.lane.Roles)
		for i := range w.Agents {
			a := &w.Agents[i]
			in.Planned = append(in.Planned, control.PlannedAgent{ID: a.ID, Role: b.RuntimeRole(a)})
			ids = append(ids, a.ID)
		}
	}
	if in.Wave == nil && in.Planned == nil {
		if werr != nil {
			return control.Status{}, werr
		}
		return control.Status{}, usageError{fmt.Errorf("lane %s has no wave %d (no wave file, no recorded run)", e.lane.Name, n)}
	}
	if agent != "" && !knownAgent(in.Wave, ids, agent) {
		return control.Status{}, usageError{fmt.Errorf("wave %d has no agent %q (--agent); its agents are %s", n, agent, strings.Join(ids, ", "))}
	}
	return control.FromWave(in), nil
}

func knownAgent(w *state.Wave, planned []string, id string) bool {
	for _, p := range planned {
		if p == id {
			return true
		}
	}
	if w != nil {
		for _, a := range w.Agents {
			if a.ID == id {
				return true
			}
		}
	}
	return false
}

func printControl(w io.Writer, s control.Status) {
	e := termtext.Escape
	fmt.Fprintf(w, "lane=%s wave=%d phase=%s status=%s attempt=%d/%d\n", e(s.Lane), s.Wave, e(s.Phase), s.Status, s.Attempt, s.MaxAttempts)
	fmt.Fprintf(w, "execution=%s closure=%s controller=%s\n", s.ExecutionState, s.ClosureState, s.ControllerState)
	if b := s.BlockingEdge; b != nil {
		fmt.Fprintf(w, "blocked on: %s %s (%s) %s\n", b.Kind, e(b.ID), e(b.AgentID), e(b.Detail))
	}
	for _, a := range s.LogicalAgents {
		fmt.Fprintf(w, "  %s %s exec=%s closure=%s %s\n", e(a.AgentID), a.State, a.ExecutionState, a.ClosureState, e(a.Reason))
	}
	for _, f := range s.FeedbackRequests {
		fmt.Fprintf(w, "  question %s from %s: %s (%s)\n", e(f.ID), e(f.AgentID), e(f.Summary), f.State)
	}
}
