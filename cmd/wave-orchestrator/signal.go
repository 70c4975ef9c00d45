package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wave-orchestrator/wave-orchestrator/gate"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
)

// signalKind is one marker `signal` writes: its tag, the gate's kind and
// its keys in the order they are printed (detail always last).
type signalKind struct {
	tag, kind, short string
	keys             []string
	example          string
}

var signalKinds = []signalKind{
	{"proof", gate.KindProof, "an implementation agent's proof of its exit contract",
		[]string{"completion", "durability", "proof", "state"}, "--completion contract --durability none --proof unit --state met"},
	{"doc-delta", gate.KindDocDelta, "an implementation agent's documentation impact",
		[]string{"state", "paths"}, "--state owned --paths docs/api.md"},
	{"component", gate.KindComponent, "a component's maturity level reached (or not)",
		[]string{"component", "level", "state"}, "--component billing --level repo-landed --state met"},
	{"integration", gate.KindIntegration, "the integration steward's verdict",
		[]string{"state", "claims", "conflicts", "blockers"}, "--state ready-for-doc-closure --claims 3 --conflicts 0 --blockers 0"},
	{"doc-closure", gate.KindDocClosure, "the documentation steward's closure",
		[]string{"state", "paths"}, "--state closed --paths docs/plans/current-state.md"},
}

func newSignalCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "signal",
		Short: "Print one canonical marker line ([wave-proof], …) for an agent to emit",
		Long: `Print one marker line the gates accept, built from flags, so an agent need
not write markers by hand. The line is checked with the gates' own parser
first: a missing key or a value out of range is a usage error naming it.`,
		Example: `  wave-orchestrator signal proof --completion contract --durability none --proof unit --state met
  wave-orchestrator signal doc-closure --state no-change`,
		Args: cobra.NoArgs,
	}
	for _, k := range signalKinds {
		c.AddCommand(newSignalKindCmd(k))
	}
	return c
}

func newSignalKindCmd(k signalKind) *cobra.Command {
	vals := map[string]*string{}
	c := &cobra.Command{
		Use:     k.tag,
		Short:   "Print a [wave-" + k.tag + "] marker: " + k.short,
		Example: "  wave-orchestrator signal " + k.tag + " " + k.example,
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			line, err := markerLine(k, vals)
			if err != nil {
				return usageError{err}
			}
			_, err = fmt.Fprintln(c.OutOrStdout(), line)
			return err
		},
	}
	for _, key := range append(append([]string(nil), k.keys...), "detail") {
		vals[key] = c.Flags().String(key, "", key+" value")
	}
	return c
}

// markerLine builds the marker from the values given and checks that the
// gates accept it.
func markerLine(k signalKind, vals map[string]*string) (string, error) {
	parts := []string{"[wave-" + k.tag + "]"}
	for _, key := range append(append([]string(nil), k.keys...), "detail") {
		v := strings.TrimSpace(*vals[key])
		if v == "" {
			continue
		}
		if termtext.HasControl(v) {
			return "", fmt.Errorf("--%s: a marker is one line of text a terminal shows as it is; control, bidi and invisible format characters are not allowed", key)
		}
		parts = append(parts, key+"="+v)
	}
	line := strings.Join(parts, " ")
	sig := gate.ParseLog(line)
	if sig.Rejected(k.kind) {
		reason := "rejected"
		if rs := sig.Diagnostics[k.kind].RejectedSamples; len(rs) > 0 {
			reason = rs[0].Reason
		}
		return "", fmt.Errorf("signal %s: the gates would reject %q: %s", k.tag, line, reason)
	}
	if sig.Diagnostics[k.kind].AcceptedCount == 0 {
		return "", fmt.Errorf("signal %s: the gates do not read %q as a %s marker", k.tag, line, k.tag)
	}
	return line, nil
}
