package main

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/supervisor"
)

func newBacklogPlanCmd(g *globals) *cobra.Command {
	f := &backlogFlags{}
	var asJSON bool
	c := &cobra.Command{
		Use:   "plan",
		Short: "Show what a backlog run would do: groups by conflict surface, width, order, and every skipped issue with why",
		Example: `  wave-orchestrator backlog plan --issues 12,15,18
  wave-orchestrator backlog plan --unbounded --json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			nums, err := f.numbers()
			if err != nil {
				return err
			}
			if err := checkWidth(c); err != nil {
				return err
			}
			be, err := openBacklog(c.Context(), g, c.ErrOrStderr())
			if err != nil {
				return err
			}
			p, err := supervisor.Preview(c.Context(), supervisor.PreviewOptions{Config: be.cfg, Source: be.src, Git: be.git,
				Issues: nums, StateDir: be.layout.StateDir})
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(c.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(p)
			}
			printPlanWarnings(c.OutOrStdout(), p)
			printPlan(c.OutOrStdout(), p)
			return nil
		},
	}
	f.selection(c)
	c.Flags().BoolVar(&asJSON, "json", false, "print the plan as JSON")
	return c
}

func printPlan(w io.Writer, p supervisor.PlanView) {
	fmt.Fprintf(w, "width %d (%d group(s) by conflict surface)\n", p.Width, len(p.Groups))
	for i, gr := range p.Groups {
		var parts []string
		for _, n := range gr.Issues {
			parts = append(parts, fmt.Sprintf("#%d %s", n, oneLineTitle(p.Titles[n])))
		}
		// Areas are label names, written by whoever may label an issue.
		surface := oneLineTitle(strings.Join(append(append([]string{}, gr.Surface.Globs...), gr.Surface.Areas...), " "))
		if surface == "" {
			surface = "(undeclared)"
		}
		fmt.Fprintf(w, "group %d: %s\n  surface: %s\n", i+1, strings.Join(parts, " → "), surface)
	}
	for _, q := range p.NeedsInput {
		fmt.Fprintf(w, "needs input: #%d %s\n", q.Issue, oneLineTitle(q.Question))
	}
	for _, s := range p.Skipped {
		detail := oneLineTitle(s.Detail)
		if file := brokenIssueFile(s.Issue, p.Warnings); file != "" && s.Reason == backlog.ReasonMissing {
			detail = "its issue file " + file + " could not be read (see the warning above)"
		}
		fmt.Fprintf(w, "skipped: #%d %s %s\n", s.Issue, s.Reason, detail)
	}
}

// printPlanWarnings prints what Preview could not read (broken issue
// files with file:line, unreadable claims) before the plan, so a skip can
// point at them.
func printPlanWarnings(w io.Writer, p supervisor.PlanView) {
	for _, m := range p.Warnings {
		fmt.Fprintf(w, "warning: %s\n", oneLineTitle(m))
	}
}

// badIssueFileRe finds the issue file a local source warning is about:
// docs/backlog/<n>-<slug>.md, then :<line> or the message.
var badIssueFileRe = regexp.MustCompile(`^(\S*?([0-9]+)(?:-[^/:]*)?\.md)(?::[0-9]+)?: `)

// brokenIssueFile is the file of issue n a warning names, "" when none.
func brokenIssueFile(n int, warnings []string) string {
	for _, m := range warnings {
		if g := badIssueFileRe.FindStringSubmatch(m); g != nil {
			base := filepath.Base(g[1])
			if num, err := strconv.Atoi(g[2]); err == nil && num == n && strings.HasPrefix(base, g[2]) {
				return oneLineTitle(g[1])
			}
		}
	}
	return ""
}

func oneLineTitle(s string) string { return strings.Join(strings.Fields(termtext.Line(s)), " ") }
