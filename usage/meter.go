package usage

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Meter reads an agent's output as it streams and keeps its usage. Feed
// it everything the agent prints (Write); lines that are not a vendor's
// JSON event are ignored. It is not safe for concurrent use.
//
// How each vendor counts, and so how the Meter adds up:
//   - claude: a stream-json `assistant` event carries its message's usage;
//     the message id keys it, so the several events of one message count
//     once. The `result` event (json and stream-json) is the CLI's own
//     total and replaces what the messages added up to.
//   - codex: token events carry the session's cumulative total, which
//     replaces the previous one (the per-turn delta beside it is never
//     added). Its input count includes the cached input; the Meter splits
//     that into InputTokens and CacheReadTokens.
//   - opencode: each finished step carries that step's tokens and cost;
//     steps are added once each, keyed by their part id.
type Meter struct {
	// Model is the model the run was started with, for pricing when the
	// output does not name one.
	Model   string
	Pricing Pricing

	line    []byte
	skip    bool  // the current line outgrew maxLine
	earlier Usage // finished starts (rate-limit restarts)
	cur     start
}

// maxLine bounds one buffered line: an event longer than that (a huge
// tool result) is skipped, never held.
const maxLine = 4 << 20

// start is one start of the agent.
type start struct {
	vendor  string
	model   string
	order   []string
	claude  map[string]Usage // message id → its usage
	result  *Usage           // claude's result event
	codex   *Usage           // codex's latest cumulative total
	steps   map[string]Usage // opencode part id → its step
	stepSeq int
}

// Write feeds output; it never fails. It reports whether the usage changed.
func (m *Meter) Write(p []byte) bool {
	changed := false
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			m.buffer(p)
			return changed
		}
		m.buffer(p[:i])
		if !m.skip && m.event(m.line) {
			changed = true
		}
		m.line, m.skip, p = m.line[:0], false, p[i+1:]
	}
	return changed
}

func (m *Meter) buffer(p []byte) {
	if m.skip {
		return
	}
	if len(m.line)+len(p) > maxLine {
		m.line, m.skip = m.line[:0], true
		return
	}
	m.line = append(m.line, p...)
}

// Restart folds the current start into the total: the agent is being
// started again (a rate-limit retry) and reports afresh.
func (m *Meter) Restart() {
	m.Write([]byte("\n"))
	m.earlier = Add(m.earlier, m.startUsage())
	m.cur = start{}
}

// Total is the usage so far, every start included, priced from the table
// when no cost was reported.
func (m *Meter) Total() Usage {
	return Add(m.earlier, m.startUsage())
}

func (m *Meter) startUsage() Usage {
	c := &m.cur
	var u Usage
	switch {
	case c.result != nil:
		u = *c.result
	case c.codex != nil:
		u = *c.codex
	case c.claude != nil:
		for _, id := range c.order {
			v := c.claude[id]
			u = Add(u, v)
		}
		u.Source = str("claude messages")
	case c.steps != nil:
		for _, id := range c.order {
			u = Add(u, c.steps[id])
		}
		u.Source = str("opencode events")
	default:
		return Usage{}
	}
	if u.Model == nil {
		u.Model = str(firstNonEmpty(c.model, m.Model))
	}
	m.price(&u)
	return u
}

// price fills a missing cost from the table.
func (m *Meter) price(u *Usage) {
	if u.CostUSD != nil || u.Model == nil || !u.Known() {
		return
	}
	pr, ok := m.Pricing.Lookup(*u.Model)
	if !ok {
		return
	}
	u.CostUSD = f64(pr.Cost(*u))
	src := "cost from pricing " + m.Pricing.AsOf
	if u.Source != nil {
		src = *u.Source + "; " + src
	}
	u.Source = &src
}

// event reads one line; it reports whether the usage changed.
func (m *Meter) event(line []byte) bool {
	line = bytes.TrimSpace(bytes.TrimRight(line, "\r"))
	if len(line) < 2 || line[0] != '{' {
		return false
	}
	var ev rawEvent
	if json.Unmarshal(line, &ev) != nil {
		return false
	}
	switch {
	case ev.Type == "result" && (ev.Usage != nil || ev.TotalCostUSD != nil || ev.ModelUsage != nil):
		return m.claudeResult(ev)
	case ev.Type == "assistant" && ev.Message != nil && ev.Message.Usage != nil:
		return m.claudeMessage(ev)
	case ev.Type == "system" && ev.Model != "":
		m.cur.model = ev.Model
	case ev.Type == "turn.completed" && ev.Usage != nil:
		return m.codexTotal(ev.Usage)
	case ev.Msg != nil:
		return m.codexLegacy(ev.Msg)
	case ev.Type == "token_count" && ev.Info != nil:
		return m.codexTotal(ev.Info.Total)
	case ev.Part != nil && ev.Part.Tokens != nil:
		return m.opencodeStep(ev.Part)
	}
	return false
}

func (m *Meter) claudeMessage(ev rawEvent) bool {
	c := &m.cur
	if c.claude == nil {
		c.claude = map[string]Usage{}
	}
	id := ev.Message.ID
	if id == "" {
		id = "#" + itoa(len(c.order))
	}
	if _, ok := c.claude[id]; !ok {
		c.order = append(c.order, id)
	}
	if ev.Message.Model != "" {
		c.model = ev.Message.Model
	}
	u := ev.Message.Usage.usage()
	u.Model = str(ev.Message.Model)
	if old, ok := c.claude[id]; ok && old.Tokens() > u.Tokens() {
		return false // a later event of the message never lowers it
	}
	c.claude[id] = u
	return c.result == nil
}

func (m *Meter) claudeResult(ev rawEvent) bool {
	var u Usage
	if ev.Usage != nil {
		u = ev.Usage.usage()
	}
	// modelUsage covers every model the run used (a small model for
	// side tasks too); usage only the main conversation.
	if len(ev.ModelUsage) > 0 {
		names := make([]string, 0, len(ev.ModelUsage))
		for k := range ev.ModelUsage {
			names = append(names, k)
		}
		sort.Strings(names)
		var sum Usage
		top, topCost := "", -1.0
		for _, k := range names {
			mu := ev.ModelUsage[k]
			sum = Add(sum, Usage{InputTokens: i64(mu.Input), OutputTokens: i64(mu.Output),
				CacheReadTokens: i64(mu.CacheRead), CacheWriteTokens: i64(mu.CacheWrite)})
			if mu.CostUSD > topCost {
				top, topCost = k, mu.CostUSD
			}
		}
		u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens =
			sum.InputTokens, sum.OutputTokens, sum.CacheReadTokens, sum.CacheWriteTokens
		u.Model = str(top)
	}
	if u.Model == nil {
		u.Model = str(m.cur.model)
	}
	if ev.TotalCostUSD != nil {
		u.CostUSD = f64(*ev.TotalCostUSD)
	}
	u.Source = str("claude result")
	m.cur.result = &u
	return true
}

func (m *Meter) codexLegacy(msg *rawEvent) bool {
	switch msg.Type {
	case "session_configured":
		if msg.Model != "" {
			m.cur.model = msg.Model
		}
	case "token_count":
		if msg.Info != nil {
			return m.codexTotal(msg.Info.Total)
		}
	}
	return false
}

// codexTotal takes a cumulative total; an older (smaller) one arriving
// late never lowers it.
func (m *Meter) codexTotal(t *rawTokens) bool {
	if t == nil {
		return false
	}
	cached := t.CachedInput
	input := t.Input - cached
	if input < 0 {
		input = 0
	}
	u := Usage{InputTokens: i64(input), OutputTokens: i64(t.Output), CacheReadTokens: i64(cached), Source: str("codex events")}
	if old := m.cur.codex; old != nil && old.Tokens() > u.Tokens() {
		return false
	}
	m.cur.codex = &u
	return true
}

func (m *Meter) opencodeStep(p *rawPart) bool {
	c := &m.cur
	if c.steps == nil {
		c.steps = map[string]Usage{}
	}
	id := p.ID
	if id == "" {
		c.stepSeq++
		id = "#" + itoa(c.stepSeq)
	}
	t := p.Tokens
	u := Usage{InputTokens: i64(t.Input), OutputTokens: i64(t.Output + t.Reasoning)}
	if t.Cache != nil {
		u.CacheReadTokens, u.CacheWriteTokens = i64(t.Cache.Read), i64(t.Cache.Write)
	}
	// opencode prints cost 0 for a model it has no price for: unknown.
	if p.Cost != nil && *p.Cost > 0 {
		u.CostUSD = f64(*p.Cost)
	}
	if _, ok := c.steps[id]; !ok {
		c.order = append(c.order, id)
	}
	c.steps[id] = u
	return true
}

// rawEvent is the union of the event shapes the Meter reads.
type rawEvent struct {
	Type         string                   `json:"type"`
	Model        string                   `json:"model"`
	Usage        *rawTokens               `json:"usage"`
	TotalCostUSD *float64                 `json:"total_cost_usd"`
	ModelUsage   map[string]rawModelUsage `json:"modelUsage"`
	Message      *rawMessage              `json:"message"`
	Msg          *rawEvent                `json:"msg"`
	Info         *rawInfo                 `json:"info"`
	Part         *rawPart                 `json:"part"`
}

type rawMessage struct {
	ID    string     `json:"id"`
	Model string     `json:"model"`
	Usage *rawTokens `json:"usage"`
}

// rawTokens reads claude's and codex's token fields alike.
type rawTokens struct {
	Input       int64 `json:"input_tokens"`
	Output      int64 `json:"output_tokens"`
	CacheRead   int64 `json:"cache_read_input_tokens"`
	CacheWrite  int64 `json:"cache_creation_input_tokens"`
	CachedInput int64 `json:"cached_input_tokens"`
}

func (t *rawTokens) usage() Usage {
	return Usage{InputTokens: i64(t.Input), OutputTokens: i64(t.Output), CacheReadTokens: i64(t.CacheRead), CacheWriteTokens: i64(t.CacheWrite)}
}

type rawModelUsage struct {
	Input      int64   `json:"inputTokens"`
	Output     int64   `json:"outputTokens"`
	CacheRead  int64   `json:"cacheReadInputTokens"`
	CacheWrite int64   `json:"cacheCreationInputTokens"`
	CostUSD    float64 `json:"costUSD"`
}

type rawInfo struct {
	Total *rawTokens `json:"total_token_usage"`
}

type rawPart struct {
	ID     string   `json:"id"`
	Type   string   `json:"type"`
	Cost   *float64 `json:"cost"`
	Tokens *rawStep `json:"tokens"`
}

type rawStep struct {
	Input     int64 `json:"input"`
	Output    int64 `json:"output"`
	Reasoning int64 `json:"reasoning"`
	Cache     *struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
