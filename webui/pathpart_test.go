package webui

import (
	"regexp"
	"strings"
	"testing"
)

// The agent and run ids the API accepts are exactly the one path
// element the documented pattern allows: nothing that climbs or nests.
func TestOnlyOnePathElementNamesAnAgentOrRun(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	for _, s := range []string{"", "A1", "a", "A1-a2", "w0.A_1", ".x", "-x", "_x", "x/y", "..", "a..b", "é", "a b",
		"a\x00", strings.Repeat("a", 128), strings.Repeat("a", 129), "20261201T230726Z-backlog-f00000"} {
		if got, want := isPathPart(s), re.MatchString(s); got != want {
			t.Errorf("isPathPart(%q) = %v, want %v", s, got, want)
		}
	}
}
