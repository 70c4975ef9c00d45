// Package promtext writes metrics in the Prometheus text exposition
// format (version 0.0.4: what every Prometheus server scrapes). It is a
// writer only, small and without state: the client library would link
// the protobuf runtime and register collectors at start in every process
// of the binary, agent runners included, for one endpoint of `serve`
// (docs/observability.md).
package promtext

import (
	"bufio"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ContentType is the format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Types of a family.
const (
	Gauge   = "gauge"
	Counter = "counter"
)

// Family is one metric name with its samples.
type Family struct {
	Name, Help, Type string
	Samples          []Sample
}

// Sample is one labelled value.
type Sample struct {
	Labels []Label
	Value  float64
}

// Label is one label of a sample.
type Label struct{ Name, Value string }

// L builds labels from name, value pairs.
func L(kv ...string) []Label {
	out := make([]Label, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, Label{kv[i], kv[i+1]})
	}
	return out
}

// Write writes the families in name order, each sample's labels sorted.
// A family without samples is left out.
func Write(w io.Writer, fams []Family) error {
	bw := bufio.NewWriter(w)
	sort.SliceStable(fams, func(i, j int) bool { return fams[i].Name < fams[j].Name })
	for _, f := range fams {
		if len(f.Samples) == 0 {
			continue
		}
		bw.WriteString("# HELP " + f.Name + " " + escapeHelp(f.Help) + "\n")
		bw.WriteString("# TYPE " + f.Name + " " + f.Type + "\n")
		for _, s := range f.Samples {
			bw.WriteString(f.Name)
			if len(s.Labels) > 0 {
				ls := append([]Label(nil), s.Labels...)
				sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
				bw.WriteByte('{')
				for i, l := range ls {
					if i > 0 {
						bw.WriteByte(',')
					}
					bw.WriteString(l.Name + `="` + escapeValue(l.Value) + `"`)
				}
				bw.WriteByte('}')
			}
			bw.WriteString(" " + formatValue(s.Value) + "\n")
		}
	}
	return bw.Flush()
}

// escapeHelp escapes a HELP text: backslash and newline.
func escapeHelp(s string) string { return escape(s, false) }

// escapeValue escapes a label value: backslash, newline and '"'.
func escapeValue(s string) string { return escape(s, true) }

func escape(s string, quote bool) string {
	if !strings.ContainsAny(s, "\\\n\"") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '"' && quote:
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func formatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
