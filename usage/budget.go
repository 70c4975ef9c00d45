package usage

import "fmt"

// Cap is a spending limit: tokens (every kind counted) and cost in USD;
// nil is no limit.
type Cap struct {
	Tokens  *int64   `json:"tokens,omitempty" yaml:"tokens,omitempty"`
	CostUSD *float64 `json:"costUsd,omitempty" yaml:"costUsd,omitempty"`
}

// Set reports whether c limits anything.
func (c Cap) Set() bool { return c.Tokens != nil || c.CostUSD != nil }

// DefaultWarnAtPercent is the share of a cap at which a warning is given.
const DefaultWarnAtPercent = 80

// Check compares u with c: over is a description of the limit u reached
// ("tokens 12.0k of 10.0k"), warn one of the limit u passed percent of;
// both empty when u is within c. A cap is reached at its value.
func (c Cap) Check(u Usage, percent int) (over, warn string) {
	if percent <= 0 {
		percent = DefaultWarnAtPercent
	}
	if c.Tokens != nil {
		n, limit := u.Tokens(), *c.Tokens
		switch {
		case n >= limit:
			return fmt.Sprintf("tokens %s of %s", FormatTokens(n), FormatTokens(limit)), ""
		case n*100 >= limit*int64(percent):
			warn = fmt.Sprintf("tokens %s of %s (%d%%)", FormatTokens(n), FormatTokens(limit), n*100/max(limit, 1))
		}
	}
	if c.CostUSD != nil && u.CostUSD != nil {
		n, limit := *u.CostUSD, *c.CostUSD
		switch {
		case n >= limit:
			return fmt.Sprintf("cost %s of %s", FormatCost(n), FormatCost(limit)), ""
		case warn == "" && n*100 >= limit*float64(percent):
			warn = fmt.Sprintf("cost %s of %s (%.0f%%)", FormatCost(n), FormatCost(limit), n*100/limit)
		}
	}
	return "", warn
}
