package e2etest

import "github.com/wave-orchestrator/wave-orchestrator/internal/termtext"

// HostileQuestion reads "approve the deploy? yes" on a screen that obeys
// the right-to-left override and isolate it hides.
const HostileQuestion = "approve the deploy? \u202eon\u202c \u2066yes\u2069\x1b[2J\u200b"

// RawControl is the first character of s no text for people may hold raw.
func RawControl(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && termtext.Unsafe(r) {
			return r, true
		}
	}
	return 0, false
}
