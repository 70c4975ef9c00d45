package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
)

// stateWaves are the waves with a directory in the lane's state (none
// when it cannot be read: the caller then finds no record).
func stateWaves(e *laneEnv) []int {
	ws, _ := e.layout.Waves()
	return ws
}

// findRecord finds record id in wave n's log, or with n < 0 in the
// lane's waves (newest wave first).
func findRecord(c *cobra.Command, e *laneEnv, n int, id string) (int, []coord.Record, error) {
	waves := []int{n}
	if n < 0 {
		waves = stateWaves(e)
		slices.Reverse(waves)
	}
	var notFound error
	for _, w := range waves {
		recs, bad, err := coord.Read(e.layout.CoordinationPath(w))
		if err != nil {
			return 0, nil, err
		}
		for _, b := range bad {
			fmt.Fprintln(c.ErrOrStderr(), "unreadable coordination record at", b)
		}
		if _, _, err := coord.Find(recs, w, id); err == nil {
			return w, recs, nil
		} else if notFound == nil || w == n {
			notFound = err
		}
	}
	if n < 0 {
		return 0, nil, fmt.Errorf("lane %s has no coordination record %q in any wave (give --wave N to see a wave's open records)", e.lane.Name, id)
	}
	return 0, nil, notFound
}

func newCoordShowCmd(g *globals) *cobra.Command {
	var n int
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Print one coordination record and its history",
		Example: `  wave-orchestrator coord show coord-blocker-1a2b3c4d
  wave-orchestrator coord show -w 0 q-0f1e2d3c --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			e, err := openLane(g)
			if err != nil {
				return err
			}
			w, recs, err := findRecord(c, e, n, args[0])
			if err != nil {
				return err
			}
			rec, history, _ := coord.Find(recs, w, args[0])
			if g.json {
				return json.NewEncoder(c.OutOrStdout()).Encode(map[string]any{"record": rec, "history": history, "blocks": coord.Blocks(rec)})
			}
			printRecord(c.OutOrStdout(), rec, len(history))
			return nil
		},
	}
	waveVar(c, &n, "wave", "w", envInt("WAVE_NUMBER", -1), "wave `N` (default $WAVE_NUMBER, else every wave of the lane)")
	c.Flags().BoolVar(&g.json, "json", false, "print {record, history, blocks} as JSON")
	return c
}

func printRecord(w io.Writer, r coord.Record, lines int) {
	e := termtext.Escape
	fmt.Fprintf(w, "id=%s wave=%d kind=%s status=%s agent=%s priority=%s blocking=%v blocks=%v\n",
		e(r.ID), r.Wave, e(r.Kind), e(r.Status), e(r.AgentID), e(r.Priority), r.Blocking, coord.Blocks(r))
	fmt.Fprintln(w, "summary:", e(r.Summary))
	if r.Detail != "" {
		fmt.Fprintln(w, "detail:", e(r.Detail))
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "targets:", e(strings.Join(r.Targets, ", ")))
	}
	if len(r.DependsOn) > 0 {
		fmt.Fprintln(w, "depends on:", e(strings.Join(r.DependsOn, ", ")))
	}
	if r.Answer != "" {
		fmt.Fprintf(w, "answer (%s): %s\n", e(r.Operator), e(r.Answer))
	}
	fmt.Fprintf(w, "created %s, updated %s, %d log lines\n", r.CreatedAt.Format(time.RFC3339), r.UpdatedAt.Format(time.RFC3339), lines)
}

func newCoordInboxCmd(g *globals) *cobra.Command {
	var n int
	var agent string
	c := &cobra.Command{
		Use:   "inbox",
		Short: "Open records addressed to an agent, or (without --agent) waiting on a person",
		Example: `  wave-orchestrator coord inbox -w 0 --agent A2
  wave-orchestrator coord inbox -w 0 --json     # questions and escalations for people`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openLane(g)
			if err != nil {
				return err
			}
			waves := []int{n}
			if n < 0 {
				waves = stateWaves(e)
			}
			view := []coord.Record{}
			for _, w := range waves {
				recs, bad, err := coord.Read(e.layout.CoordinationPath(w))
				if err != nil {
					return err
				}
				for _, b := range bad {
					fmt.Fprintln(c.ErrOrStderr(), "unreadable coordination record at", b)
				}
				view = append(view, coord.Inbox(recs, agent)...)
			}
			if g.json {
				return json.NewEncoder(c.OutOrStdout()).Encode(view)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "WAVE\tID\tKIND\tSTATUS\tFROM\tSUMMARY")
			for _, r := range view {
				e := termtext.Escape
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Wave, e(r.ID), e(r.Kind), e(r.Status), e(r.AgentID), e(r.Summary))
			}
			return tw.Flush()
		},
	}
	waveVar(c, &n, "wave", "w", envInt("WAVE_NUMBER", -1), "wave `N` (default $WAVE_NUMBER, else every wave of the lane)")
	c.Flags().StringVarP(&agent, "agent", "a", os.Getenv("WAVE_AGENT_ID"), "the agent `ID` whose inbox to show (default $WAVE_AGENT_ID; none: what waits on a person)")
	_ = c.RegisterFlagCompletionFunc("agent", completeAgents)
	c.Flags().BoolVar(&g.json, "json", false, "print JSON")
	return c
}

func newCoordActCmd(g *globals) *cobra.Command {
	var (
		n                            int
		detail, by, to, response, op string
		force                        bool
	)
	c := &cobra.Command{
		Use:   "act resolve|dismiss|reroute|answer-human ID",
		Short: "Resolve, dismiss or reroute a coordination record, or answer a person's question",
		Long: `resolve and dismiss close a record (status resolved, or cancelled) and every
open record that depends on it. reroute supersedes a record and opens a
request to --to AGENT with its summary. answer-human answers a question
record (human-feedback, human-escalation, clarification-request) with
--response: the same answer record as the answer command, which the
launcher sees and gives to the agent that asked.`,
		Example: `  wave-orchestrator coord act resolve coord-blocker-1a2b3c4d --detail "schema v2 agreed"
  wave-orchestrator coord act dismiss -w 0 coord-request-5e6f7a8b
  wave-orchestrator coord act reroute -w 0 coord-request-5e6f7a8b --to A3
  wave-orchestrator coord act answer-human q-0f1e2d3c --response "use port 8081" --operator alice`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			action, id := args[0], args[1]
			switch action {
			case coord.ActResolve, coord.ActDismiss, coord.ActReroute, "answer-human":
			default:
				return usageError{fmt.Errorf("coord act %q: want resolve, dismiss, reroute or answer-human", action)}
			}
			if action == coord.ActReroute && to == "" {
				return usageError{errors.New("coord act reroute needs --to AGENT")}
			}
			if action == "answer-human" && strings.TrimSpace(response) == "" {
				return usageError{errors.New("coord act answer-human needs --response TEXT")}
			}
			e, err := openLane(g)
			if err != nil {
				return err
			}
			w, recs, err := findRecord(c, e, n, id)
			if err != nil {
				return err
			}
			if action == "answer-human" {
				return answerHuman(c, e, recs, w, id, response, op, force, g.json)
			}
			now := time.Now()
			out, err := coord.Act(recs, w, action, id, detail, by, to, now)
			if err != nil {
				return err
			}
			if err := coord.Append(e.layout.CoordinationPath(w), out, now); err != nil {
				return err
			}
			if g.json {
				return json.NewEncoder(c.OutOrStdout()).Encode(out)
			}
			for _, r := range out {
				fmt.Fprintln(c.OutOrStdout(), termtext.Escape(fmt.Sprintf("wave %d: %s %s %s", w, r.Kind, r.ID, r.Status)))
			}
			return nil
		},
	}
	f := c.Flags()
	waveVar(c, &n, "wave", "w", envInt("WAVE_NUMBER", -1), "wave `N` (default $WAVE_NUMBER, else the lane's wave that has the record)")
	f.StringVar(&detail, "detail", "", "resolve/dismiss/reroute: why (recorded as the record's detail)")
	f.StringVarP(&by, "agent", "a", os.Getenv("WAVE_AGENT_ID"), "reroute: who posts the new request (default $WAVE_AGENT_ID, else the record's author)")
	f.StringVar(&to, "to", "", "reroute: the agent `ID` the new request targets")
	f.StringVar(&response, "response", "", "answer-human: the answer")
	f.StringVar(&op, "operator", defaultOperator(), "answer-human: who answers (recorded)")
	f.BoolVar(&force, "force", false, "answer-human: answer a question that is already answered")
	f.BoolVar(&g.json, "json", false, "print the appended records (answer-human: the question) as JSON")
	return c
}

// answerHuman answers a wave question through package questions, so the
// record is the one `answer` writes.
func answerHuman(c *cobra.Command, e *laneEnv, recs []coord.Record, w int, id, text, op string, force, asJSON bool) error {
	rec, _, err := coord.Find(recs, w, id)
	if err != nil {
		return err
	}
	if !questions.IsQuestion(rec) {
		return usageError{fmt.Errorf("record %s is a %s, not a question to a person (%s); use coord act resolve", id, rec.Kind, strings.Join(questions.Kinds, ", "))}
	}
	q, err := questions.Answer(c.Context(), e.layout, id, text, op, force, questions.AnswerOptions{})
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(c.OutOrStdout()).Encode(q)
	}
	fmt.Fprintln(c.OutOrStdout(), termtext.Escape(fmt.Sprintf("answered %s (%s)", q.ID, q.Where())))
	return nil
}
