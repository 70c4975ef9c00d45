package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

func newCoordCmd(g *globals) *cobra.Command {
	c := &cobra.Command{Use: "coord", Short: "Post to or list a wave's coordination log",
		Long: `The wave's coordination log (waves/<N>/coordination.jsonl): claims, evidence,
requests, decisions, blockers and handoffs that agents post while they work.
An open blocking record holds closure until it is resolved.`,
		Example: `  wave-orchestrator coord list -w 0 --open
  wave-orchestrator coord post -w 0 --kind blocker --summary "schema undecided" --blocking
  wave-orchestrator coord inbox -w 0 --agent A2
  wave-orchestrator coord act resolve -w 0 coord-blocker-1a2b3c4d`}
	c.AddCommand(newCoordPostCmd(g), newCoordListCmd(g), newCoordShowCmd(g), newCoordInboxCmd(g), newCoordActCmd(g))
	return c
}

// envInt reads an int flag default from the agent environment (WAVE_*),
// so agents can post without repeating what the runner already set.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func newCoordPostCmd(g *globals) *cobra.Command {
	var (
		waveN                 int
		rec                   coord.Record
		blocking, nonBlocking bool
	)
	c := &cobra.Command{
		Use:   "post",
		Short: "Append a coordination record (claim, evidence, request, decision, blocker, handoff)",
		Example: `  # an agent, with WAVE_NUMBER and WAVE_AGENT_ID from its environment:
  wave-orchestrator coord post --kind claim --summary "taking src/api"
  wave-orchestrator coord post -w 0 -a A2 --kind blocker --summary "needs a schema decision" --blocking
  wave-orchestrator coord post -w 0 --id blocker-1 --status resolved   # resolve it`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if g.lane == "" {
				g.lane = os.Getenv("WAVE_LANE")
			}
			e, err := openLane(g)
			if err != nil {
				return err
			}
			if waveN < 0 {
				return usageError{fmt.Errorf("--wave is required (or WAVE_NUMBER in the environment)")}
			}
			if rec.AgentID == "" {
				rec.AgentID = os.Getenv("WAVE_AGENT_ID")
			}
			path := e.layout.CoordinationPath(waveN)
			if rec.ID != "" {
				// An update of an existing record (e.g. resolving a
				// blocker) keeps what it does not change.
				recs, _, err := coord.Read(path)
				if err != nil {
					return err
				}
				for _, old := range coord.Materialize(recs) {
					if old.ID == rec.ID {
						rec = coord.Update(old, rec)
					}
				}
			}
			if rec.Kind == "" || rec.Summary == "" {
				return usageError{errors.New("--kind and --summary are required for a new record")}
			}
			rec.Wave, rec.Lane = waveN, e.lane.Name
			if a := envInt("WAVE_ATTEMPT", 0); a > 0 {
				rec.Attempt = &a
			}
			var b *bool
			if blocking {
				t := true
				b = &t
			} else if nonBlocking {
				f := false
				b = &f
			}
			out, err := coord.Post(path, rec, b, time.Now())
			if err != nil {
				return usageError{err}
			}
			if g.json {
				return json.NewEncoder(c.OutOrStdout()).Encode(out)
			}
			fmt.Fprintln(c.OutOrStdout(), termtext.Escape(fmt.Sprintf("posted %s %s (%s)", out.Kind, out.ID, out.Status)))
			return nil
		},
	}
	f := c.Flags()
	waveVar(c, &waveN, "wave", "w", envInt("WAVE_NUMBER", -1), "wave `N` (default $WAVE_NUMBER)")
	f.StringVarP(&rec.AgentID, "agent", "a", "", "posting agent `ID` (default $WAVE_AGENT_ID)")
	_ = c.RegisterFlagCompletionFunc("agent", completeAgents)
	f.StringVar(&rec.Kind, "kind", "", "claim|evidence|request|decision|blocker|handoff|…")
	_ = c.RegisterFlagCompletionFunc("kind", completeKinds)
	f.StringVar(&rec.Summary, "summary", "", "one-line summary")
	f.StringVar(&rec.Detail, "detail", "", "details")
	f.StringVar(&rec.ID, "id", "", "record id (reuse an id to update a record, e.g. to resolve a blocker)")
	f.StringVar(&rec.Status, "status", "", "open|acknowledged|in_progress|resolved|closed|superseded|cancelled")
	_ = c.RegisterFlagCompletionFunc("status", completeStatuses)
	f.StringVar(&rec.Priority, "priority", "", "low|normal|high|urgent")
	f.StringSliceVar(&rec.Targets, "target", nil, "target (repeatable), e.g. agent:A2")
	f.StringSliceVar(&rec.ArtifactRefs, "artifact", nil, "artifact path (repeatable)")
	f.BoolVar(&blocking, "blocking", false, "mark blocking")
	f.BoolVar(&nonBlocking, "non-blocking", false, "mark non-blocking")
	f.BoolVar(&g.json, "json", false, "print the record as JSON")
	return c
}

func newCoordListCmd(g *globals) *cobra.Command {
	var (
		waveN    int
		openOnly bool
	)
	c := &cobra.Command{
		Use:   "list",
		Short: "List a wave's coordination records (materialised: latest per id)",
		Example: `  wave-orchestrator coord list -w 0
  wave-orchestrator coord list -w 0 --open --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openLane(g)
			if err != nil {
				return err
			}
			recs, bad, err := coord.Read(e.layout.CoordinationPath(waveN))
			if err != nil {
				return err
			}
			for _, b := range bad {
				fmt.Fprintln(c.ErrOrStderr(), "unreadable record at", b)
			}
			view := coord.Materialize(recs)
			if openOnly {
				view = coord.Open(recs)
			}
			if g.json {
				if view == nil {
					view = []coord.Record{}
				}
				return json.NewEncoder(c.OutOrStdout()).Encode(view)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tAGENT\tBLOCKS\tSUMMARY")
			for _, r := range view {
				e := termtext.Escape
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\n", e(r.ID), e(r.Kind), e(r.Status), e(r.AgentID), coord.Blocks(r), e(r.Summary))
			}
			return tw.Flush()
		},
	}
	waveVar(c, &waveN, "wave", "w", envInt("WAVE_NUMBER", 0), "wave `N` (default $WAVE_NUMBER, else 0)")
	c.Flags().BoolVar(&openOnly, "open", false, "only records that hold closure")
	c.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return c
}
