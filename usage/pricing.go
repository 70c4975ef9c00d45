package usage

import (
	"sort"
	"strings"
)

// Price is what one model costs, in USD per million tokens.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cacheRead" yaml:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite" yaml:"cacheWrite"`
}

// Pricing is the price table (config `pricing:`): the date its prices
// were taken from the vendors' price lists, and a price per model.
type Pricing struct {
	AsOf   string           `json:"asOf" yaml:"asOf"`
	Models map[string]Price `json:"models" yaml:"models"`
}

// DefaultPricesAsOf is when the default prices were copied from the
// vendors' public price lists. Prices change: override them in config.
const DefaultPricesAsOf = "2025-10-01"

// DefaultPricing is the built-in table: the models the scaffold names and
// their usual neighbours. Claude prices are Anthropic's list prices
// (cache writes at the 5-minute rate); OpenAI's cached input is the
// cache-read price and it has no cache-write charge.
func DefaultPricing() Pricing {
	return Pricing{AsOf: DefaultPricesAsOf, Models: map[string]Price{
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.30, CacheWrite: 3.75},
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
		"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.50, CacheWrite: 18.75},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.10, CacheWrite: 1.25},
		"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-codex":       {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
	}}
}

// Merged is p over the defaults: a model p prices replaces the default
// price, and p's date, when set, is the table's.
func (p Pricing) Merged() Pricing {
	out := DefaultPricing()
	for k, v := range p.Models {
		out.Models[k] = v
	}
	if p.AsOf != "" {
		out.AsOf = p.AsOf
	}
	return out
}

// Lookup finds the price of model: an exact name, else the longest name
// in the table the model starts with (a dated release such as
// claude-sonnet-4-5-20250929, or a provider prefix such as
// anthropic/claude-sonnet-4-5, prices as its family).
func (p Pricing) Lookup(model string) (Price, bool) {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if pr, ok := p.Models[m]; ok {
		return pr, true
	}
	names := make([]string, 0, len(p.Models))
	for k := range p.Models {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	for _, k := range names {
		if strings.HasPrefix(m, strings.ToLower(k)) {
			return p.Models[k], true
		}
	}
	return Price{}, false
}

// Cost prices u's tokens at pr.
func (pr Price) Cost(u Usage) float64 {
	return (float64(val(u.InputTokens))*pr.Input + float64(val(u.OutputTokens))*pr.Output +
		float64(val(u.CacheReadTokens))*pr.CacheRead + float64(val(u.CacheWriteTokens))*pr.CacheWrite) / 1e6
}
