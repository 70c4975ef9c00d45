package config

import (
	"fmt"
	"slices"
	"strings"
)

// Sink kinds of notify[].kind.
const (
	SinkCommand = "command"
	SinkWebhook = "webhook"
	SinkDesktop = "desktop"
)

// NotifyEvents are the events people can be told about, the values of
// notify[].events.
var NotifyEvents = []string{
	"question-asked", "question-answered",
	"wave-completed", "wave-failed", "wave-blocked", "agent-stalled",
	"issue-merged", "issue-needs-input", "issue-parked", "final-pr-opened", "final-pr-checks", "foreign-commit", "usage-limited",
}

// NotifySink is one entry of notify: where people are told, and about
// which events. A command is an argv (never a shell string) that reads the
// event's JSON on stdin; a webhook's URL is read from the variable URLEnv
// names, so the secret never sits in the file.
type NotifySink struct {
	Name   string   `json:"name" yaml:"name"` // default "<kind>-<index>"
	Kind   string   `json:"kind" yaml:"kind"`
	Events []string `json:"events" yaml:"events"` // empty: every event
	Argv   []string `json:"argv" yaml:"argv"`     // command
	URLEnv string   `json:"urlEnv" yaml:"urlEnv"` // webhook
}

// Wants reports whether the sink is told about event.
func (s NotifySink) Wants(event string) bool {
	return len(s.Events) == 0 || slices.Contains(s.Events, event)
}

func (c *Config) validateNotify(p *problems) {
	seen := map[string]bool{}
	for i := range c.Notify {
		s := &c.Notify[i]
		key := fmt.Sprintf("notify[%d]", i)
		s.Kind = strings.ToLower(strings.TrimSpace(s.Kind))
		p.oneOf(key+".kind", s.Kind, SinkCommand, SinkWebhook, SinkDesktop)
		if s.Name = strings.TrimSpace(s.Name); s.Name == "" {
			s.Name = fmt.Sprintf("%s-%d", s.Kind, i)
		}
		if seen[s.Name] {
			p.add(key+".name", "%q names another sink too; names must be unique", s.Name)
		}
		seen[s.Name] = true
		for j, ev := range s.Events {
			if !slices.Contains(NotifyEvents, ev) {
				p.add(fmt.Sprintf("%s.events[%d]", key, j), "%q is not one of %s", ev, strings.Join(NotifyEvents, ", "))
			}
		}
		switch s.Kind {
		case SinkCommand:
			if len(s.Argv) == 0 || strings.TrimSpace(s.Argv[0]) == "" {
				p.add(key+".argv", "a command sink needs an argv list whose first element is the program")
			}
		case SinkWebhook:
			if !envNameRe.MatchString(s.URLEnv) {
				// The value is not echoed: a URL put here by mistake is the
				// secret itself.
				p.add(key+".urlEnv", "a webhook sink needs urlEnv, the name of an environment variable holding its URL (not the URL)")
			}
		}
		if s.Kind != SinkCommand && len(s.Argv) > 0 {
			p.add(key+".argv", "only a command sink takes argv")
		}
		if s.Kind != SinkWebhook && s.URLEnv != "" {
			p.add(key+".urlEnv", "only a webhook sink takes urlEnv")
		}
	}
}
