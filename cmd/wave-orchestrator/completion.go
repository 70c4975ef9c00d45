package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/coord"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Dynamic shell completion (cobra's __complete): --lane, --wave, --agent
// come from the repository the command line points at (--repo-root and
// --lane already typed count), so they offer what exists. Nothing here
// prints: a completion that cannot read the repo offers nothing.

const noFiles = cobra.ShellCompDirectiveNoFileComp

// completionGlobals reads --repo-root and --lane from the line typed so far.
func completionGlobals(cmd *cobra.Command) *globals {
	g := &globals{envWarned: true, flags: cmd.Flags()}
	if f := cmd.Flag("repo-root"); f != nil {
		g.repoRoot = f.Value.String()
	}
	if f := cmd.Flag("lane"); f != nil {
		g.lane = f.Value.String()
	}
	return g
}

func completeLanes(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	g := completionGlobals(cmd)
	g.lane = ""
	root, err := g.root()
	if err != nil {
		return nil, noFiles
	}
	cfg, err := config.Load(root, os.LookupEnv)
	if err != nil {
		return nil, noFiles
	}
	names := []string{cfg.DefaultLane}
	for n := range cfg.Lanes {
		names = append(names, n)
	}
	// Lanes that have run, declared or not.
	if e, err := openLane(g); err == nil {
		entries, _ := os.ReadDir(filepath.Dir(e.layout.StateDir))
		for _, en := range entries {
			if en.IsDir() {
				names = append(names, en.Name())
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), noFiles
}

func completeWaves(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	e, err := openLane(completionGlobals(cmd))
	if err != nil {
		return nil, noFiles
	}
	entries, err := os.ReadDir(filepath.Join(e.lane.RepoRoot, e.lane.WavesDir))
	if err != nil {
		return nil, noFiles
	}
	type item struct {
		n     int
		title string
	}
	var items []item
	for _, en := range entries {
		n, err := wave.Number(en.Name())
		if err != nil {
			continue
		}
		items = append(items, item{n, waveTitle(filepath.Join(e.lane.RepoRoot, e.lane.WavesDir, en.Name()))})
	}
	slices.SortFunc(items, func(a, b item) int { return a.n - b.n })
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = withDescription(strconv.Itoa(it.n), it.title)
	}
	return out, noFiles
}

// waveTitle is the first heading of a wave file, for a completion's
// description.
func waveTitle(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "# "); ok {
			return t
		}
	}
	return ""
}

func completeAgents(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	e, err := openLane(completionGlobals(cmd))
	if err != nil {
		return nil, noFiles
	}
	ws, err := wave.LoadDir(e.lane.RepoRoot, e.lane.WavesDir, e.waveOptions())
	if err != nil {
		return nil, noFiles
	}
	only := -1
	if f := cmd.Flag("wave"); f != nil && f.Value.String() != "" {
		only, _ = strconv.Atoi(f.Value.String())
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if only >= 0 && w.Number != only {
			continue
		}
		for _, a := range w.Agents {
			if !seen[a.ID] && printableID(a.ID) {
				seen[a.ID] = true
				out = append(out, withDescription(a.ID, fmt.Sprintf("%s (wave %d)", a.Title, w.Number)))
			}
		}
	}
	return out, noFiles
}

func completeList(values ...string) cobra.CompletionFunc {
	return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return values, noFiles
	}
}

var (
	completePhases    = completeList(roles.Phases...)
	completeExecutors = completeList(executor.IDs...)
	completeKinds     = completeList(coord.Kinds...)
	completeStatuses  = completeList(coord.Statuses...)
)

// withDescription is cobra's "value\tdescription", the description kept
// to one line a terminal shows as it is (it comes from wave files).
func withDescription(v, desc string) string {
	if desc = strings.Join(strings.Fields(termtext.Line(desc)), " "); desc == "" {
		return v
	}
	return v + "\t" + desc
}

// printableID: an id offered for completion is one word a shell and a
// terminal take as it is.
func printableID(s string) bool {
	return s != "" && !termtext.HasControl(s) && !strings.ContainsFunc(s, unicode.IsSpace)
}
