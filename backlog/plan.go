package backlog

import (
	"fmt"
	"slices"
	"strings"
)

// PlanOptions selects and constrains what MakePlan plans.
type PlanOptions struct {
	Issues             []int          // bounded: exactly these, in this order; nil → unbounded
	Width              int            // <=0 → 5
	Labels             []string       // required labels (AND, any case)
	NeedsInputLabel    string         // "" → "needs-input"
	UndeclaredParallel bool           // an undeclared surface collides with nothing
	MaxIssues          int            // unbounded: at most this many planned (0 = no cap)
	InFlight           []InFlight     // work already running (surfaces to avoid)
	Claimed            map[int]string // issue → foreign holder ("run X on host Y"): skipped
	Done               map[int]bool   // issues this run already handled: not planned again
}

// InFlight is an issue a worker is already on.
type InFlight struct {
	Issue   int     `json:"issue"`
	Surface Surface `json:"surface"`
}

// Plan is what to dispatch, in which order, and why the rest is not.
type Plan struct {
	Width      int        `json:"width"`      // workers to run at once: min(opts.Width, len(Groups))
	Groups     []Group    `json:"groups"`     // dispatch order
	Order      []int      `json:"order"`      // every planned issue in dispatch order
	NeedsInput []Question `json:"needsInput"` // the needs-input bucket
	Skipped    []Skip     `json:"skipped"`    // every issue considered and not planned
	// Rejected lists surface entries the parser refused, per issue, so a
	// user learns why an issue counts as undeclared or narrower than meant.
	Rejected []IssueRejected `json:"rejected,omitempty"`
}

// Group is issues that collide with each other (directly or through a
// chain): one worker runs them in sequence in one worktree. Surface is
// the union of its members'.
type Group struct {
	Issues  []int   `json:"issues"`
	Surface Surface `json:"surface"`
}

// Question is a needs-input issue and what it asks: the last comment (or
// else body line) that asks something, else the title.
type Question struct {
	Issue    int    `json:"issue"`
	Title    string `json:"title"`
	Question string `json:"question"`
}

// Skip is an issue considered and not planned.
type Skip struct {
	Issue  int    `json:"issue"`
	Reason string `json:"reason"` // one of the Reason constants
	Detail string `json:"detail"`
}

// IssueRejected is a surface entry of one issue that ParseSurface refused.
type IssueRejected struct {
	Issue int `json:"issue"`
	Rejected
}

// Skip reasons.
const (
	ReasonMissing          = "missing"            // bounded number the source did not return
	ReasonClosed           = "closed"             // bounded number that is closed
	ReasonLabelMismatch    = "label-mismatch"     // lacks a required label
	ReasonNeedsInput       = "needs-input"        // in the needs-input bucket
	ReasonClaimed          = "claimed"            // Detail = the foreign holder
	ReasonCollidesInFlight = "collides-in-flight" // Detail = "with #n (why)"
	ReasonInFlight         = "in-flight"          // a worker is already on it
	ReasonDone             = "done"               // already handled in this run
	ReasonOverCap          = "over-cap"           // unbounded, beyond MaxIssues
)

// DefaultWidth is the number of workers when PlanOptions.Width is unset.
const DefaultWidth = 5

// DefaultNeedsInputLabel is the label that parks an issue in the bucket.
const DefaultNeedsInputLabel = "needs-input"

// MakePlan plans a wave. Candidates are the bounded list in its order
// (missing and closed numbers reported) or, unbounded, every open issue
// in rank order (SortIssues). Then, in this precedence: done, label
// mismatch, claimed, in flight, needs-input (into the bucket), colliding
// with in-flight work — each skipped with its reason; unbounded, beyond
// MaxIssues by rank. Groups are the connected components of the
// collision graph among the rest, ordered by their first member's rank,
// members in rank order.
func MakePlan(issues []Issue, opts PlanOptions) Plan {
	p := Plan{Groups: []Group{}, Order: []int{}, NeedsInput: []Question{}, Skipped: []Skip{}}
	m := newMatcher()
	inFlight := make([]compiledSurface, len(opts.InFlight))
	for i, f := range opts.InFlight {
		inFlight[i] = m.surface(f.Surface)
	}
	var kept []candidate
	for _, is := range candidates(issues, opts, &p) {
		c := candidate{Issue: is, surface: m.surface(ParseSurface(is.Body, is.Labels))}
		for _, r := range c.surface.Rejected {
			p.Rejected = append(p.Rejected, IssueRejected{Issue: is.Number, Rejected: r})
		}
		if skip, ok := filter(c, opts, m, inFlight, &p); ok {
			p.Skipped = append(p.Skipped, skip)
			continue
		}
		if opts.Issues == nil && opts.MaxIssues > 0 && len(kept) >= opts.MaxIssues {
			p.Skipped = append(p.Skipped, Skip{is.Number, ReasonOverCap, fmt.Sprintf("beyond the cap of %d issues", opts.MaxIssues)})
			continue
		}
		kept = append(kept, c)
	}
	for _, members := range components(kept, opts.UndeclaredParallel, m) {
		g := Group{Issues: make([]int, 0, len(members))}
		var ss []Surface
		for _, k := range members {
			g.Issues = append(g.Issues, kept[k].Number)
			ss = append(ss, kept[k].surface.Surface)
		}
		g.Surface = union(ss...)
		p.Groups = append(p.Groups, g)
		p.Order = append(p.Order, g.Issues...)
	}
	p.Width = opts.Width
	if p.Width <= 0 {
		p.Width = DefaultWidth
	}
	p.Width = min(p.Width, len(p.Groups))
	return p
}

type candidate struct {
	Issue
	surface compiledSurface
}

// candidates returns the issues to consider in rank order, recording
// missing and closed bounded numbers in p.
func candidates(issues []Issue, opts PlanOptions, p *Plan) []Issue {
	byNumber := make(map[int]Issue, len(issues))
	var open []Issue
	for _, is := range issues {
		if _, dup := byNumber[is.Number]; dup {
			continue
		}
		byNumber[is.Number] = is
		if !isClosed(is) {
			open = append(open, is)
		}
	}
	if opts.Issues == nil {
		SortIssues(open)
		return open
	}
	var out []Issue
	seen := map[int]bool{}
	for _, n := range opts.Issues {
		if seen[n] {
			continue
		}
		seen[n] = true
		is, ok := byNumber[n]
		switch {
		case !ok:
			p.Skipped = append(p.Skipped, Skip{n, ReasonMissing, "not returned by the issue source"})
		case isClosed(is):
			p.Skipped = append(p.Skipped, Skip{n, ReasonClosed, "issue is closed"})
		default:
			out = append(out, is)
		}
	}
	return out
}

func isClosed(is Issue) bool { return strings.EqualFold(strings.TrimSpace(is.State), "closed") }

// filter decides whether a candidate is skipped, and adds needs-input
// issues to the bucket.
func filter(c candidate, opts PlanOptions, m *matcher, inFlight []compiledSurface, p *Plan) (Skip, bool) {
	n := c.Number
	if opts.Done[n] {
		return Skip{n, ReasonDone, "already handled in this run"}, true
	}
	if missing := missingLabels(c.Labels, opts.Labels); len(missing) > 0 {
		return Skip{n, ReasonLabelMismatch, "lacks label " + strings.Join(missing, ", ")}, true
	}
	if holder, ok := opts.Claimed[n]; ok {
		return Skip{n, ReasonClaimed, holder}, true
	}
	if slices.ContainsFunc(opts.InFlight, func(f InFlight) bool { return f.Issue == n }) {
		return Skip{n, ReasonInFlight, "a worker is already on it"}, true
	}
	label := opts.NeedsInputLabel
	if label == "" {
		label = DefaultNeedsInputLabel
	}
	if hasLabel(c.Labels, label) {
		q := Question{Issue: n, Title: c.Title, Question: AskedQuestion(c.Issue)}
		p.NeedsInput = append(p.NeedsInput, q)
		return Skip{n, ReasonNeedsInput, q.Question}, true
	}
	var with []string
	for i, f := range opts.InFlight {
		if hit, why := m.collide(c.surface, inFlight[i], opts.UndeclaredParallel); hit {
			with = append(with, fmt.Sprintf("#%d (%s)", f.Issue, why))
		}
	}
	if len(with) > 0 {
		return Skip{n, ReasonCollidesInFlight, "with " + strings.Join(with, ", ")}, true
	}
	return Skip{}, false
}

func hasLabel(labels []string, want string) bool {
	return slices.ContainsFunc(labels, func(l string) bool {
		return strings.EqualFold(strings.TrimSpace(l), strings.TrimSpace(want))
	})
}

func missingLabels(have, want []string) []string {
	var missing []string
	for _, w := range want {
		if !hasLabel(have, w) {
			missing = append(missing, w)
		}
	}
	return missing
}

// components groups candidates into the connected components of the
// collision graph; each component lists indexes into cs in rank order,
// and components are ordered by their first member.
func components(cs []candidate, undeclaredParallel bool, m *matcher) [][]int {
	parent := make([]int, len(cs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range cs {
		for j := range i {
			ri, rj := find(i), find(j)
			if ri == rj {
				continue // already joined: no need to know whether they collide
			}
			if hit, _ := m.collide(cs[i].surface, cs[j].surface, undeclaredParallel); hit {
				parent[max(ri, rj)] = min(ri, rj)
			}
		}
	}
	index := map[int]int{}
	var out [][]int
	for i := range cs {
		r := find(i)
		k, ok := index[r]
		if !ok {
			k = len(out)
			index[r] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], i)
	}
	return out
}
