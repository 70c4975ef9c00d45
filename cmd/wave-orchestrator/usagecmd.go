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
	"github.com/wave-orchestrator/wave-orchestrator/spend"
	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// usageReport is `usage --json`.
type usageReport struct {
	Lane       string        `json:"lane"`
	By         string        `json:"by"`
	Wave       *int          `json:"wave"`
	Since      *time.Time    `json:"since"`
	Rows       []spend.Row   `json:"rows"`
	Total      usage.Usage   `json:"total"`
	Runs       int           `json:"runs"`
	Pricing    usage.Pricing `json:"pricing"`
	PricesAsOf string        `json:"pricesAsOf"`
}

func newUsageCmd(g *globals) *cobra.Command {
	var by, since string
	var waveN int
	var asJSON, outcomes bool
	c := &cobra.Command{
		Use:   "usage",
		Short: "What the lane's runs spent: tokens and cost from the durable run records, by agent, wave, issue, executor or model",
		Example: `  wave-orchestrator usage
  wave-orchestrator usage --wave 2 --by agent
  wave-orchestrator usage --since 7d --by issue --json
  wave-orchestrator usage --outcomes --since 30d --by executor`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			e, err := openWaveRepo(g)
			if err != nil {
				return err
			}
			now := time.Now()
			from, err := spend.ParseSince(since, now)
			if err != nil {
				return usageError{err}
			}
			if outcomes {
				return runOutcomes(c, e, outcomesArgs{by: by, byGiven: c.Flags().Changed("by"), wave: waveN, from: from, json: asJSON})
			}
			var wp *int
			if waveN >= 0 {
				wp = &waveN
			}
			runs := spend.Filter(spend.LaneRuns(e.layout), wp, from)
			rows, err := spend.Group(runs, by)
			if err != nil {
				return usageError{err}
			}
			rep := usageReport{Lane: e.lane.Name, By: by, Wave: wp, Rows: rows, Total: spend.Total(runs), Runs: len(runs),
				Pricing: e.lane.Pricing, PricesAsOf: e.lane.Pricing.AsOf}
			if rep.Rows == nil {
				rep.Rows = []spend.Row{}
			}
			if !from.IsZero() {
				rep.Since = &from
			}
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			renderUsage(c.OutOrStdout(), rep)
			return nil
		},
	}
	c.Flags().StringVar(&by, "by", "agent", "group by agent, wave, issue, executor or model")
	waveVar(c, &waveN, "wave", "w", -1, "only this wave's runs")
	c.Flags().StringVar(&since, "since", "", "only runs started since, e.g. 7d or 36h")
	c.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	c.Flags().BoolVar(&outcomes, "outcomes", false, "the outcome ledger of the lane's backlog runs: issues taken, merged, parked, needs-input, reverted on the base branch, spend per merged issue, median claim to merge (--by executor, model or label)")
	return c
}

func renderUsage(w io.Writer, rep usageReport) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tRUNS\tINPUT\tOUTPUT\tCACHE READ\tCACHE WRITE\tCOST\n", "BY "+strings.ToUpper(rep.By))
	row := func(key string, runs int, u usage.Usage) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", termtext.Escape(key), runs, usage.TokensCell(u.InputTokens), usage.TokensCell(u.OutputTokens),
			usage.TokensCell(u.CacheReadTokens), usage.TokensCell(u.CacheWriteTokens), usage.CostCell(u.CostUSD))
	}
	for _, r := range rep.Rows {
		row(r.Key, r.Runs, r.Usage)
	}
	row("total", rep.Runs, rep.Total)
	tw.Flush()
	fmt.Fprintf(w, "costs the CLI did not report are priced from the table as of %s (config pricing: overrides it)\n", termtext.Escape(rep.PricesAsOf))
}
