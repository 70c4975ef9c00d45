// Package usage owns what agent runs spend: the Usage record (tokens,
// cost, model, where the figures came from), the Meter that reads it from
// a vendor CLI's streamed output as it arrives (claude `--output-format
// json|stream-json`, codex `exec --json`, opencode `run --format json`),
// the price table that turns tokens into dollars when the CLI reports
// none, and the caps a budget checks. It does no I/O: the runner feeds it
// the agent's output, and the launcher, the supervisor and the `usage`
// command add up the records it produced.
package usage

import "fmt"

// Usage is what one run (or a sum of runs) spent. A field is nil when no
// source reported it: unknown is never 0.
type Usage struct {
	InputTokens      *int64   `json:"inputTokens"`
	OutputTokens     *int64   `json:"outputTokens"`
	CacheReadTokens  *int64   `json:"cacheReadTokens"`
	CacheWriteTokens *int64   `json:"cacheWriteTokens"`
	CostUSD          *float64 `json:"costUsd"`
	Model            *string  `json:"model"`
	// Source says where the figures came from, e.g. "claude result",
	// "codex events", "opencode events; cost from pricing 2025-10-01".
	Source *string `json:"source"`
}

// Known reports whether any figure is known.
func (u Usage) Known() bool {
	return u.InputTokens != nil || u.OutputTokens != nil || u.CacheReadTokens != nil ||
		u.CacheWriteTokens != nil || u.CostUSD != nil
}

// Tokens is every token counted: input, output and both cache kinds.
func (u Usage) Tokens() int64 {
	return val(u.InputTokens) + val(u.OutputTokens) + val(u.CacheReadTokens) + val(u.CacheWriteTokens)
}

// Cost is the cost in USD, 0 when unknown.
func (u Usage) Cost() float64 {
	if u.CostUSD == nil {
		return 0
	}
	return *u.CostUSD
}

// Ptr returns &u, or nil when nothing is known (the JSON then says null).
func (u Usage) Ptr() *Usage {
	if !u.Known() {
		return nil
	}
	return &u
}

// Add sums two usages. A figure stays nil only when both are nil; a model
// or source the two disagree on becomes "mixed".
func Add(a, b Usage) Usage {
	return Usage{
		InputTokens:      addInt(a.InputTokens, b.InputTokens),
		OutputTokens:     addInt(a.OutputTokens, b.OutputTokens),
		CacheReadTokens:  addInt(a.CacheReadTokens, b.CacheReadTokens),
		CacheWriteTokens: addInt(a.CacheWriteTokens, b.CacheWriteTokens),
		CostUSD:          addFloat(a.CostUSD, b.CostUSD),
		Model:            merge(a.Model, b.Model),
		Source:           merge(a.Source, b.Source),
	}
}

// String is a short human form: "12.3k tok $0.42", "-" when unknown.
func (u Usage) String() string {
	if !u.Known() {
		return "-"
	}
	s := FormatTokens(u.Tokens()) + " tok"
	if u.CostUSD != nil {
		s += " " + FormatCost(*u.CostUSD)
	}
	return s
}

// FormatTokens prints n as 950, 12.3k or 4.56M.
func FormatTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// FormatCost prints a dollar amount with cents (tenths of a cent below $1).
func FormatCost(c float64) string {
	if c < 1 {
		return fmt.Sprintf("$%.3f", c)
	}
	return fmt.Sprintf("$%.2f", c)
}

// TokensCell and CostCell are a figure as a table cell (`usage`, the
// final PR's spend table): FormatTokens / FormatCost, "-" when unknown.
func TokensCell(n *int64) string {
	if n == nil {
		return "-"
	}
	return FormatTokens(*n)
}

// CostCell: see TokensCell.
func CostCell(c *float64) string {
	if c == nil {
		return "-"
	}
	return FormatCost(*c)
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func addInt(a, b *int64) *int64 {
	if a == nil && b == nil {
		return nil
	}
	n := val(a) + val(b)
	return &n
}

func addFloat(a, b *float64) *float64 {
	if a == nil && b == nil {
		return nil
	}
	var n float64
	if a != nil {
		n += *a
	}
	if b != nil {
		n += *b
	}
	return &n
}

func merge(a, b *string) *string {
	switch {
	case a == nil:
		return b
	case b == nil || *a == *b:
		return a
	}
	m := "mixed"
	return &m
}

func i64(n int64) *int64     { return &n }
func f64(n float64) *float64 { return &n }
func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
