package backlogcli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// doctor on a backlog repository checks what `backlog run` will need:
// the workers' executor on PATH (and claude as root only in a sandbox),
// every issue file readable with file:line, and names a shell variable the
// workers will not see; a repository with no waves at all is fine.
func TestDoctorChecksWhatBacklogWorkersNeed(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fine", "Files: a/**")
	r.Write("docs/backlog/2-bad-yaml.md", "---\ntitle: [unclosed\n---\nbody\n")
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", strings.Replace(string(cfg), "  executor:\n    id: local", "  executor:\n    id: claude", 1))
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
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	r.Issue(1, "Fine", "Files: a/**")
	e2etest.GitIn(t, r.Root, "remote", "remove", "origin")
	doc := r.RunWith(context.Background(), r.Env(), "doctor")
	if doc.Code != 1 || !strings.Contains(doc.Stdout, "error backlog: backlog mode needs a remote named origin") || strings.Contains(doc.Stdout, "fatal:") {
		t.Errorf("doctor: exit %d\n%s", doc.Code, doc.Stdout)
	}
}

// An origin with no branch yet: doctor and `backlog run` both name the
// push that fixes it, and the run claims nothing. Once a branch is on
// origin, that is enough even when origin's HEAD names none (a bare
// repository made with another default branch), and so is a base given
// in the config.
func TestBacklogWithAnOriginWithoutBranchNamesThePushAndABaseOnOriginIsEnough(t *testing.T) {
	t.Parallel()
	origin := gittest.EmptyOrigin(t)
	r := &e2etest.BacklogRepo{Repo: &e2etest.Repo{T: t, Root: gittest.CloneOf(t, origin)}, Origin: origin}
	t.Cleanup(r.CleanupTmux)
	ctx := context.Background()
	if res := r.Run(ctx, "init"); res.Code != 0 {
		t.Fatalf("init: %d %s", res.Code, res.Stderr)
	}
	r.Issue(1, "Fine", "Files: a/**")
	e2etest.GitIn(t, r.Root, "add", "-A")
	e2etest.GitIn(t, r.Root, "commit", "-q", "-m", "project")
	const fix = "origin has no branch yet, and backlog runs start from origin's base branch: push yours first (`git push -u origin main`), or name another one that is on origin in github.baseBranch"
	if doc := r.RunEnv(ctx, "doctor"); doc.Code != 1 || !strings.Contains(doc.Stdout, "error backlog: "+fix+"\n") {
		t.Errorf("doctor: exit %d, want 1 naming the push\n%s", doc.Code, doc.Stdout)
	}
	run := r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard")
	if run.Code != 1 || run.Stderr != "wave-orchestrator: "+fix+"\n" {
		t.Fatalf("backlog run: exit %d, want 1 naming the push\n%s%s", run.Code, run.Stdout, run.Stderr)
	}
	r.NothingClaimed(t)

	// Pushed, with origin's HEAD naming a branch it does not have: the one
	// branch origin has is the base.
	e2etest.GitIn(t, r.Root, "push", "-q", "-u", "origin", "main")
	e2etest.GitIn(t, origin, "symbolic-ref", "HEAD", "refs/heads/master")
	if doc := r.RunEnv(ctx, "doctor"); !strings.Contains(doc.Stdout, "ok    backlog: origin present (claims and the wave branch live there), runs start from its main\n") {
		t.Errorf("doctor after the push: exit %d\n%s", doc.Code, doc.Stdout)
	}
	// A base in the config is the base, once it is on origin.
	e2etest.GitIn(t, r.Root, "push", "-q", "origin", "main:release")
	r.Write("wave.config.yaml", strings.Replace(readFile(t, filepath.Join(r.Root, "wave.config.yaml")), "\nbacklog:\n", "\ngithub:\n  baseBranch: release\nbacklog:\n", 1))
	if doc := r.RunEnv(ctx, "doctor"); !strings.Contains(doc.Stdout, "runs start from its release\n") {
		t.Errorf("doctor with github.baseBranch: exit %d\n%s", doc.Code, doc.Stdout)
	}
	run = r.RunEnv(ctx, "backlog", "run", "--issues", "1", "--no-dashboard")
	if run.Code != 0 || !strings.Contains(run.Stdout, "#1 merged into") || !strings.Contains(run.Stdout, "→ release") {
		t.Fatalf("backlog run with a base on origin: exit %d\n%s%s", run.Code, run.Stdout, run.Stderr)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
