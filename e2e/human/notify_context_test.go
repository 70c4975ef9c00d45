package human

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// An agent's question told to a webhook carries the context the agent
// gave (`ask --context`) and names the project, in the payload and in the
// line a person reads.
func TestAQuestionsNotificationCarriesItsContextAndNamesTheProject(t *testing.T) {
	t.Parallel()
	r := e2etest.NewRepo(t)
	hook := newHookReceiver(t, http.StatusOK)
	r.Write("wave.config.yaml", e2etest.Config+"projectName: shop\nnotify:\n"+fmt.Sprintf("  - kind: webhook\n    urlEnv: %s\n", e2etest.HookEnv))
	script := filepath.Join(t.TempDir(), "asker")
	body := "#!/bin/sh\nset -e\nmkdir -p src\necho done > src/a1.txt\n" +
		e2etest.Bin() + " ask --non-blocking --question 'Which port should the API use?' --context 'The API and the admin UI both want 8080.'\n" +
		"echo '[wave-proof] completion=contract durability=none proof=unit state=met'\necho '[wave-doc-delta] state=owned'\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1", "id: shell", "shell.command: "+script)}, e2etest.ClosureAgents()...)...)
	if res := r.RunWith(e2etest.Context(t), []string{e2etest.HookEnv + "=" + hook.URL()}, "launch", "--lane", "main", "--no-dashboard"); res.Code != 0 {
		t.Fatalf("launch: %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	hook.Mu.Lock()
	defer hook.Mu.Unlock()
	var asked map[string]any
	for _, b := range hook.Bodies {
		if b["event"] == "question-asked" {
			asked = b
		}
		if text, _ := b["text"].(string); !strings.HasPrefix(text, "shop, lane main: ") {
			t.Errorf("%v's text %q does not name the project", b["event"], text)
		}
		if b["project"] != "shop" {
			t.Errorf("%v's payload has project %v, want shop", b["event"], b["project"])
		}
	}
	if asked == nil || asked["context"] != "The API and the admin UI both want 8080." ||
		!strings.Contains(asked["text"].(string), "The API and the admin UI both want 8080.") {
		t.Fatalf("question-asked payload %v: want the question's context in it and in its text", asked)
	}
}
