package wave

import (
	"strings"
	"testing"
)

// backlog.executor takes the `### Executor` keys, env.NAME included, with
// the same rules as a wave file: a bad name is refused naming its key and
// rule, and the other entries still come through.
func TestExecutorMapTakesEnvEntries(t *testing.T) {
	c, errs := ParseExecutorMap(map[string]string{
		"id": "claude", "env.IS_SANDBOX": "1", "env.BASE_URL": "`http://127.0.0.1:8080`", "env.EMPTY": `""`,
	})
	if len(errs) != 0 {
		t.Fatalf("errors %v", errs)
	}
	if c.ID == nil || *c.ID != "claude" || len(c.Env) != 3 || c.Env["IS_SANDBOX"] != "1" ||
		c.Env["BASE_URL"] != "http://127.0.0.1:8080" || c.Env["EMPTY"] != "" {
		t.Fatalf("config id %v env %v", c.ID, c.Env)
	}
	_, errs = ParseExecutorMap(map[string]string{"env.9LIVES": "x", "codex.turbo": "on", "model": ""})
	want := []string{"codex.turbo: unknown executor key", "env.9LIVES: executor env.9LIVES", "model: executor key \"model\" has an empty value"}
	rules := []string{"unknown-executor-key", "bad-env-name", "empty-executor-value"}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %d", errs, len(want))
	}
	for i, err := range errs {
		if !strings.HasPrefix(err.Error(), want[i]) || !strings.Contains(err.Error(), "(rule "+rules[i]+")") {
			t.Errorf("error %d: %q, want prefix %q and rule %s", i, err, want[i], rules[i])
		}
	}
}
