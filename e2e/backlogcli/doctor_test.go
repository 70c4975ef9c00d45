package backlogcli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// doctor on a backlog repository checks what `backlog run` will need:
// the workers' executor on PATH (and claude as root only in a sandbox),
// every issue file readable with file:line, and names a shell variable the
// workers will not see; a repository with no waves at all is fine.
func TestDoctorChecksWhatBacklogWorkersNeed(t *testing.T) {
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fine", "Files: a/**")
	r.Write("docs/backlog/2-bad-yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", string(cfg)+"backlog:\n  executor:\n    id: claude\n")
	waves := filepath.Join(r.Root, "docs", "plans", "waves")
	if err := os.RemoveAll(waves); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	noClaude := "PATH=" + e2etest.PathOf(t, []string{"git", "tmux"}, nil)
	doc := r.RunWith(ctx, append(r.Env(), noClaude, "ANTHROPIC_BASE_URL=http://127.0.0.1:9"), "doctor")
	for _, want := range []string{
		"ok    backlog: origin present",
		"error backlog workers: executor claude: not on PATH (needed by backlog workers)",
		"warn  backlog workers: $ANTHROPIC_BASE_URL is set in this shell, but workers will not see it",
		"error backlog: issue file ",
		"2-bad-yaml.md:2: front matter is not valid YAML",
		"ok    backlog: local source docs/backlog, 1 open issue(s) readable",
		"ok    waves: none",
	} {
		if !strings.Contains(doc.Stdout, want) {
			t.Errorf("doctor lacks %q:\n%s", want, doc.Stdout)
		}
	}
	if doc.Code != 1 || strings.Contains(doc.Stdout, "waves directory") {
		t.Errorf("doctor: exit %d (want 1, for the executor and the issue file, not for missing waves)\n%s", doc.Code, doc.Stdout)
	}

	// The workers' claude on PATH, but root without IS_SANDBOX: named.
	r.Write("docs/backlog/2-bad-yaml.md", "---\ntitle: fixed\n---\nFiles: b/**\n")
	withClaude := "PATH=" + e2etest.PathOf(t, []string{"git", "tmux"}, map[string]string{"claude": e2etest.FakeClaude})
	doc = r.RunWith(ctx, append(r.Env(), withClaude, "IS_SANDBOX="), "doctor")
	if os.Geteuid() == 0 && !strings.Contains(doc.Stdout, "error backlog workers: executor claude: runs as root") {
		t.Errorf("doctor as root without IS_SANDBOX does not say so:\n%s", doc.Stdout)
	}
	// In a sandbox, with everything readable, doctor passes.
	doc = r.RunWith(ctx, append(r.Env(), withClaude, "IS_SANDBOX=1"), "doctor")
	if doc.Code != 0 || !strings.Contains(doc.Stdout, "ok    backlog workers: executor claude: found") {
		t.Errorf("doctor: exit %d, want 0 with the workers' claude found\n%s", doc.Code, doc.Stdout)
	}
}

// doctor without an origin says backlog mode needs one, in words.
func TestDoctorSaysBacklogModeNeedsOrigin(t *testing.T) {
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fine", "Files: a/**")
	e2etest.GitIn(t, r.Root, "remote", "remove", "origin")
	doc := r.RunWith(context.Background(), r.Env(), "doctor")
	if doc.Code != 1 || !strings.Contains(doc.Stdout, "error backlog: backlog mode needs a remote named origin") || strings.Contains(doc.Stdout, "fatal:") {
		t.Errorf("doctor: exit %d\n%s", doc.Code, doc.Stdout)
	}
}
