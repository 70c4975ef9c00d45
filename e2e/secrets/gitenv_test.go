package secrets

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// gitEnvLog puts a git first on PATH that appends, for every call, its
// arguments and the values of the given variables it was started with,
// then runs the real git. It returns the PATH and the log's path.
func gitEnvLog(t *testing.T, names ...string) (string, string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "git-calls")
	var b strings.Builder
	b.WriteString("#!/bin/sh\n{ printf 'CALL'; printf ' %s' \"$@\"; printf '\\n'\n")
	for _, n := range names {
		b.WriteString("  [ -n \"${" + n + "+x}\" ] && printf '  " + n + "=%s\\n' \"$" + n + "\"\n")
	}
	b.WriteString("} >> " + log + "\nexec " + real + " \"$@\"\n")
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH"), log
}

// Every command that reads a backlog run runs git the way the supervisor
// does: the configured GitHub token variable (github.tokenEnv) only in
// the calls that talk to origin, a notify sink's URL in none — `backlog
// status`, `backlog diff`, `backlog prune --dry-run`, doctor and the
// dashboard's backlog view alike, whose git calls read workers'
// checkouts.
func TestEveryCommandReadingABacklogRunKeepsTheTokenFromGit(t *testing.T) {
	t.Parallel()
	r := e2etest.NewBacklogRepo(t)
	cfg, err := os.ReadFile(filepath.Join(r.Root, "wave.config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r.Write("wave.config.yaml", string(cfg)+"github:\n  tokenEnv: MY_BACKLOG_TOKEN\n"+notifySink)
	r.Issue(1, "Add a greeting", "Files: src/greet/**")
	if run := r.RunEnv(e2etest.Context(t), "backlog", "run", "--issues", "1", "--no-dashboard"); run.Code != 0 {
		t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
	}
	const token, hook = "ghp_myBacklogTokenLeak0008", "https://hooks.example.invalid/services/HOOKLEAK0009"
	for _, args := range [][]string{
		{"dashboard", "--view", "backlog"},
		{"backlog", "status"},
		{"backlog", "diff", "1"},
		{"backlog", "prune", "--dry-run"},
		{"doctor"},
	} {
		name := strings.Join(args, " ")
		path, log := gitEnvLog(t, "MY_BACKLOG_TOKEN", "CHAT_HOOK_URL")
		res := r.RunWith(e2etest.Context(t), append(r.Env(), "PATH="+path, "MY_BACKLOG_TOKEN="+token, "CHAT_HOOK_URL="+hook), args...)
		if strings.Contains(res.Stdout+res.Stderr, token) || strings.Contains(res.Stdout+res.Stderr, hook) {
			t.Errorf("%s printed a secret:\n%s%s", name, res.Stdout, res.Stderr)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatalf("%s (exit %d) ran no git: %v\n%s", name, res.Code, err, res.Stderr)
		}
		var call string
		for _, line := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(line, "CALL "):
				call = strings.TrimPrefix(line, "CALL ")
			case strings.Contains(line, hook):
				t.Errorf("%s: git %s got the sink's URL", name, call)
			case strings.Contains(line, token) && !remote(call):
				t.Errorf("%s: git %s got the token, and it does not talk to origin", name, call)
			}
		}
	}
}

// remote reports whether a git call's arguments talk to origin.
func remote(call string) bool {
	f := strings.Fields(call)
	for i, a := range f {
		if a == "fetch" || a == "push" || a == "ls-remote" {
			return strings.Contains(strings.Join(f[i:], " "), "origin")
		}
	}
	return false
}
