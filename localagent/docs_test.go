package localagent

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/local-agent.md documents every directive the simulated worker
// obeys, and nothing it does not: each row of its table is a key the
// worker accepts, each key the worker accepts has a row, and the page's
// example issue parses.
func TestEveryWorkerDirectiveIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/local-agent.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, backlog, ok := strings.Cut(doc, "## Backlog mode")
	if !ok {
		t.Fatal("docs/local-agent.md has no backlog section")
	}
	rows := regexp.MustCompile("(?m)^\\| `([a-z-]+)(?:=([^`]*))?` \\|").FindAllStringSubmatch(backlog, -1)
	documented := map[string]bool{}
	for _, r := range rows {
		documented[r[1]] = true
		sample := r[2]
		switch sample {
		case "N":
			sample = "1"
		case "DURATION":
			sample = "1ms"
		case "PATH", "TEXT":
			sample = "x"
		}
		var k workerKnobs
		if err := k.set(r[1], sample); err != nil {
			t.Errorf("the documented `%s` is refused: %v", r[0], err)
		}
	}
	for _, key := range directiveKeys {
		if !documented[key] {
			t.Errorf("directive %s is not documented in docs/local-agent.md", key)
		}
	}
	if len(documented) != len(directiveKeys) {
		t.Errorf("documented %d directives, the worker has %d", len(documented), len(directiveKeys))
	}
	examples := regexp.MustCompile(`(?m)^local-agent: .*$`).FindAllString(backlog, -1)
	if len(examples) == 0 {
		t.Fatal("docs/local-agent.md shows no example directive line")
	}
	for _, ex := range examples {
		if _, err := parseKnobs(ex); err != nil {
			t.Errorf("the example %q does not parse: %v", ex, err)
		}
	}
	if !slices.Contains(strings.Fields(doc), "`WAVE_ANSWERS_FILE`") {
		t.Error("docs/local-agent.md does not say how an answered run is told")
	}
}
