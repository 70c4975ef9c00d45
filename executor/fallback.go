package executor

import (
	"slices"
	"strings"
)

// Command returns the program a resolved executor needs on PATH: the
// vendor command, the first word of a shell template, or "" for local
// (the local agent is this binary).
func Command(r Resolved) string { return commandFor(r, r.ID) }

func commandFor(r Resolved, id string) string {
	switch id {
	case Codex:
		return cmp(deref(r.Codex.Command), Codex)
	case Claude:
		return cmp(deref(r.Claude.Command), Claude)
	case Opencode:
		return cmp(deref(r.Opencode.Command), Opencode)
	case Shell:
		words, err := SplitWords(deref(r.Shell.Command))
		if err != nil || len(words) == 0 {
			return ""
		}
		return words[0]
	}
	return ""
}

// Chain is the fallback chain a retry may use: empty when the policy is
// sticky or fallback on retry is disallowed.
func Chain(r Resolved) []string {
	if r.RetryPolicy == Sticky || !r.AllowFallbackOnRetry {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(r.Fallbacks), func(s string) bool { return s == "" })
}

// FallbackWithin picks the executor for retry attempt attempt of an agent that
// failed with statusCode (docs/wave-files.md, fallbacks). available reports whether a
// command is on PATH; it is called with Command of each candidate and of
// the current executor, never with "" (local needs nothing).
//
// The first chain entry that is neither current nor already in the
// history and whose command is available wins. With an empty chain, or
// when no candidate is usable but the current executor still is, the
// retry stays on the current executor: the reference blocks the wave in
// that second case even though nothing prevents a plain retry, which we
// treat as a bug. blocked is true only when the chain is non-empty, no
// candidate is usable and the current executor is unavailable too.
//
// Under the lane's runtime mix, fits reports whether moving this agent
// onto executor id keeps runtimeMixTargets (nil: no targets). A candidate
// that would exceed a target is blocked (retry-fallback-blocked, listed
// in mixBlocked) and the next one tried, as the reference does.
func FallbackWithin(r Resolved, attempt int, statusCode string, available, fits func(id string) bool) (next Resolved, blocked bool, mixBlocked []string) {
	ok := func(id string) bool {
		c := commandFor(r, id)
		return c == "" && (id == Local) || c != "" && available(c)
	}
	chain := Chain(r)
	if len(chain) == 0 {
		return r, false, nil
	}
	tried := []string{r.ID}
	for _, h := range r.History {
		tried = append(tried, h.ExecutorID)
	}
	for _, c := range chain {
		if slices.Contains(tried, c) || !ok(c) {
			continue
		}
		if fits != nil && !fits(c) {
			mixBlocked = append(mixBlocked, c)
			continue
		}
		return switchTo(r, c, attempt, statusCode), false, mixBlocked
	}
	return r, !ok(r.ID), mixBlocked
}

// MixFits reports whether one more agent on executor id keeps the runtime
// mix targets (executor id → most agents of a wave on it), given how many
// of the wave's agents run on each executor now. An executor without a
// target always fits.
func MixFits(targets, counts map[string]int, id string) bool {
	for k, t := range targets {
		if strings.EqualFold(strings.TrimSpace(k), id) {
			return counts[id]+1 <= t
		}
	}
	return true
}

func switchTo(r Resolved, id string, attempt int, statusCode string) Resolved {
	reason := "retry:" + cmp(strings.TrimSpace(statusCode), "failed-attempt")
	n := r
	n.ID = id
	n.SelectedBy = ByRetryFallback
	n.FallbackUsed = true
	n.FallbackReason = &reason
	if n.InitialExecutorID == "" {
		n.InitialExecutorID = r.ID
	}
	switch id {
	case Claude:
		n.Model = r.Claude.Model
	case Opencode:
		n.Model = r.Opencode.Model
	default:
		n.Model = nil
	}
	n.History = append(slices.Clone(r.History), HistoryEntry{Attempt: attempt, ExecutorID: id, Reason: reason})
	n.Fallbacks = slices.Clone(r.Fallbacks)
	n.Tags = slices.Clone(r.Tags)
	return n
}

// UsageFallback is r moved onto executor id for attempt because r's own
// executor's account is out (a usage limit): the backlog's
// backlog.executor.fallbacks take the work until the limit resets,
// whatever the retry policy (a usage limit is no failed attempt).
func UsageFallback(r Resolved, id string, attempt int) Resolved {
	return switchTo(r, id, attempt, "usage-limited")
}

// Available reports whether executor id of r's chain can run here: its
// command on PATH (available says), or local.
func Available(r Resolved, id string, available func(cmd string) bool) bool {
	c := commandFor(r, id)
	return c == "" && id == Local || c != "" && available(c)
}
