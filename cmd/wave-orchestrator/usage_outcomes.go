package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/outcomes"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// outcomesReport is `usage --outcomes --json`.
type outcomesReport struct {
	Lane   string           `json:"lane"`
	By     string           `json:"by"`
	Since  *time.Time       `json:"since"`
	Rows   []outcomes.Row   `json:"rows"`
	Total  outcomes.Row     `json:"total"`
	Issues []outcomes.Issue `json:"issues"`
}

type outcomesArgs struct {
	by      string
	byGiven bool
	wave    int
	from    time.Time
	json    bool
}

func runOutcomes(c *cobra.Command, e *laneEnv, a outcomesArgs) error {
	if a.wave >= 0 {
		return usageError{fmt.Errorf("--outcomes counts backlog issues, which belong to no wave: drop --wave")}
	}
	by := ""
	if a.byGiven {
		by = a.by
	}
	issues, problems := outcomes.Gather(c.Context(), e.layout, e.lane.RepoRoot)
	for _, p := range problems {
		fmt.Fprintln(c.ErrOrStderr(), "usage: warning: "+termtext.Line(p))
	}
	issues = outcomes.Since(issues, a.from)
	rows, total, err := outcomes.Build(issues, by)
	if err != nil {
		return usageError{err}
	}
	rep := outcomesReport{Lane: e.lane.Name, By: by, Rows: rows, Total: total, Issues: issues}
	if rep.Rows == nil {
		rep.Rows = []outcomes.Row{}
	}
	if rep.Issues == nil {
		rep.Issues = []outcomes.Issue{}
	}
	if !a.from.IsZero() {
		rep.Since = &a.from
	}
	if a.json {
		enc := json.NewEncoder(c.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	renderOutcomes(c.OutOrStdout(), rep)
	return nil
}

func renderOutcomes(w io.Writer, rep outcomesReport) {
	if rep.Total.Taken == 0 {
		fmt.Fprintln(w, "no backlog run of this lane took an issue"+sinceWords(rep.Since))
		return
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	head := "OUTCOMES"
	if rep.By != "" {
		head = "BY " + strings.ToUpper(rep.By)
	}
	fmt.Fprintf(tw, "%s\tTAKEN\tMERGED\tPARKED\tNEEDS INPUT\tIN FLIGHT\tREVERTED\tCOST/MERGED\tTOKENS/MERGED\tCLAIM→MERGE\n", head)
	row := func(r outcomes.Row) {
		cost, tokens, wait := "-", "-", "-"
		if pm := r.PerMerged; pm != nil {
			if pm.CostUSD != nil {
				cost = fmt.Sprintf("$%.2f", *pm.CostUSD)
			}
			if pm.Tokens != nil {
				n := int64(*pm.Tokens)
				tokens = usage.TokensCell(&n)
			}
		}
		if r.MedianClaimToMerge != nil {
			wait = outcomes.Duration(*r.MedianClaimToMerge)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", termtext.Escape(r.Key), r.Taken, r.Merged, r.Parked,
			r.NeedsInput, r.InFlight, r.Reverted, cost, tokens, wait)
	}
	for _, r := range rep.Rows {
		row(r)
	}
	row(rep.Total)
	tw.Flush()
	for _, is := range rep.Issues {
		if is.RevertedBy != "" {
			fmt.Fprintf(w, "reverted: #%d (run %s): its merge %s was reverted on %s by %s\n", is.Number, termtext.Escape(is.Run),
				short7(is.MergeCommit), termtext.Escape(is.Base), short7(is.RevertedBy))
		}
	}
	fmt.Fprintln(w, "cost and tokens per merged issue count every run of the issues taken, merged or not; medians are of the merged issues"+sinceWords(rep.Since))
}

func sinceWords(since *time.Time) string {
	if since == nil {
		return ""
	}
	return " (claimed since " + since.UTC().Format(time.RFC3339) + ")"
}

func short7(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
