package gitops

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// gitCall is one git process as a wrapper on PATH saw it.
type gitCall struct {
	args []string
	env  map[string]string
}

// recordGit puts a git first on PATH that, while recording is on, writes
// its argv and environment to a log, and runs the real git. It returns
// the switch and the reader of the log.
func recordGit(t *testing.T) (func(on bool), func() []gitCall) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, log, flag := t.TempDir(), filepath.Join(t.TempDir(), "calls"), filepath.Join(t.TempDir(), "on")
	script := "#!/bin/sh\nif [ -e " + flag + " ]; then { printf 'ARGS'; for a in \"$@\"; do printf '\\037%s' \"$a\"; done; printf '\\n'; " +
		"env | sed 's/^/ENV /'; printf 'END\\n'; } >> " + log + "; fi\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	record := func(on bool) {
		if on {
			_ = os.WriteFile(flag, nil, 0o600)
		} else {
			_ = os.Remove(flag)
		}
	}
	return record, func() []gitCall {
		b, _ := os.ReadFile(log)
		var calls []gitCall
		var cur *gitCall
		for _, l := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(l, "ARGS"):
				calls = append(calls, gitCall{args: strings.Split(l, "\x1f")[1:], env: map[string]string{}})
				cur = &calls[len(calls)-1]
			case strings.HasPrefix(l, "ENV ") && cur != nil:
				k, v, _ := strings.Cut(strings.TrimPrefix(l, "ENV "), "=")
				cur.env[k] = v
			}
		}
		return calls
	}
}

// reachesOrigin: the call fetches from, pushes to or lists origin.
func (c gitCall) reachesOrigin() bool {
	i := slices.IndexFunc(c.args, func(a string) bool { return a == "fetch" || a == "push" || a == "ls-remote" })
	return i >= 0 && slices.Contains(c.args[i:], "origin")
}

// The supervisor's git never holds the GitHub token (GITHUB_TOKEN,
// GH_TOKEN, the configured token variable) but in the calls that talk to
// origin, where a credential helper may need it; every call runs with
// hooks pointed at an empty directory of its own and fsmonitor off, no
// system configuration, and as the global one its own file; and no hook
// or fsmonitor of the user's clone, its configured hooks path or the
// user's global configuration runs.
func TestSupervisorGitRunsWithoutTheToken(t *testing.T) {
	origin := newOrigin(t)
	user := gittest.CloneOf(t, origin)
	marker := filepath.Join(t.TempDir(), "ran")
	prog := filepath.Join(t.TempDir(), "evil")
	writeFile(t, prog, "#!/bin/sh\necho \"$0 GITHUB_TOKEN=$GITHUB_TOKEN\" >> "+marker+"\n")
	if err := os.Chmod(prog, 0o755); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(t.TempDir(), "hooks")
	for _, dir := range []string{filepath.Join(user, ".git", "hooks"), planted} {
		for _, h := range []string{"pre-push", "reference-transaction", "post-checkout", "post-merge", "pre-auto-gc", "post-rewrite"} {
			writeFile(t, filepath.Join(dir, h), "#!/bin/sh\necho "+h+" GITHUB_TOKEN=$GITHUB_TOKEN >> "+marker+"\n")
			if err := os.Chmod(filepath.Join(dir, h), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	gitT(t, user, "config", "core.fsmonitor", prog)
	gitT(t, user, "config", "--unset", "user.email")
	global := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, global, "[core]\n\thooksPath = "+planted+"\n\tfsmonitor = "+prog+"\n[user]\n\temail = me@example.com\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GITHUB_TOKEN", "ghp_secret_one")
	t.Setenv("GH_TOKEN", "ghp_secret_two")
	t.Setenv("MY_BACKLOG_TOKEN", "ghp_secret_three")
	record, calls := recordGit(t)
	// The worker's own git (not the supervisor's, not under test) runs
	// with a configuration of its own.
	worker := func(dir string, args ...string) {
		gittest.Run(t, dir, append([]string{"-c", "core.hooksPath=" + os.DevNull, "-c", "core.fsmonitor=false"}, args...)...)
	}

	ctx := context.Background()
	record(true)
	t.Setenv("HOOK_URL", "https://hooks.example/secret")
	r, err := Open(ctx, user, Options{ScratchDir: t.TempDir(), Credentials: []string{"MY_BACKLOG_TOKEN"}, Secrets: []string{"HOOK_URL"}})
	if err != nil {
		t.Fatal(err)
	}
	const wave = "wave/tok"
	if _, _, err := r.EnsureWaveBranch(ctx, wave, "main"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "w")
	if _, err := r.EnsureWorkerClone(ctx, WorkerCheckout{Dir: dir, Branch: wave + "-i1", Start: "origin/" + wave}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "w.txt"), "work\n")
	record(false)
	worker(dir, "add", "w.txt")
	worker(dir, "commit", "-q", "-m", "work")
	record(true)
	if _, _, err := r.FetchFromCheckout(ctx, dir, wave+"-i1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.CheckoutState(ctx, dir); err != nil {
		t.Fatal(err)
	}
	// A pod's candidate (none here), fetched with its objects checked
	// (-c options before the command): still with the credentials.
	if _, _, err := r.FetchCandidate(ctx, CandidateRef(wave+"-i1"), wave+"-i1", "refs/remotes/origin/"+wave); err != nil {
		t.Fatal(err)
	}
	verified := false
	res, err := r.Merge(ctx, MergeRequest{Wave: wave, Worker: "refs/heads/" + wave + "-i1", Message: "Merge #1",
		Verify: func(context.Context, string, string) error { verified = true; return nil }})
	if err != nil || res.Commit == "" || !verified {
		t.Fatalf("merge: %+v %v (verified %v)", res, err, verified)
	}
	if _, err := r.SafeDeleteAll(ctx, []string{wave + "-i1"}, wave); err != nil {
		t.Fatal(err)
	}
	record(false)
	if got := gitT(t, r.Dir, "log", "-1", "--format=%ae", res.Commit); got != "me@example.com" {
		t.Errorf("the merge commit is by %q, want the identity of the user's global configuration", got)
	}

	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a hook or fsmonitor ran in the supervisor's git:\n%s", b)
	}
	all := calls()
	if len(all) < 10 {
		t.Fatalf("recorded %d git calls, want the run's", len(all))
	}
	net := 0
	for _, c := range all {
		reading := slices.Contains(c.args, "--show-scope") // the one call that reads the user's configuration
		if !reading && (c.env["GIT_CONFIG_NOSYSTEM"] != "1" || c.env["GIT_CONFIG_GLOBAL"] == global) {
			t.Errorf("git %v: system %q global %q: the user's configuration is read as it is", c.args, c.env["GIT_CONFIG_NOSYSTEM"], c.env["GIT_CONFIG_GLOBAL"])
		}
		if !slices.Contains(c.args, "core.fsmonitor=false") {
			t.Errorf("git %v: no core.fsmonitor=false", c.args)
		}
		i := slices.IndexFunc(c.args, func(a string) bool { return strings.HasPrefix(a, "core.hooksPath=") })
		if i < 0 {
			t.Errorf("git %v: no core.hooksPath", c.args)
		} else if hp := strings.TrimPrefix(c.args[i], "core.hooksPath="); hp != os.DevNull {
			if entries, err := os.ReadDir(hp); err != nil || len(entries) > 0 {
				t.Errorf("git %v: hooks path %s is not an empty directory: %v %v", c.args, hp, entries, err)
			}
		}
		if c.env["HOOK_URL"] != "" {
			t.Errorf("git %v holds a secret no git call needs", c.args)
		}
		secret := c.env["GITHUB_TOKEN"] != "" || c.env["GH_TOKEN"] != "" || c.env["MY_BACKLOG_TOKEN"] != ""
		if c.reachesOrigin() {
			net++
			if !secret {
				t.Errorf("git %v talks to origin without the credential variables", c.args)
			}
		} else if secret {
			t.Errorf("git %v holds the token", c.args)
		}
	}
	if net == 0 {
		t.Fatal("no call talked to origin")
	}
}

// The global configuration the supervisor's git reads keeps what
// committing and pushing need of the user's, and nothing that runs a
// program of theirs; written and read back it is the same keys and values.
func TestOnlyIdentityCredentialsAndTransportKeysAreCopied(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"user.name": true, "user.email": true, "user.signingkey": false,
		"credential.helper": true, "credential.https://github.com.helper": true, "credential.username": true,
		"url.git@github.com:.insteadof": true, "url.https://x/.pushinsteadof": true, "url.x.foo": false,
		"core.sshcommand": true, "core.hookspath": false, "core.fsmonitor": false, "core.pager": false, "core.editor": false,
		"http.proxy": true, "http.https://corp/.sslcainfo": true, "safe.directory": true,
		"filter.lfs.process": true, "filter.evil.clean": false, "diff.external": false, "include.path": false,
		"gpg.program": false, "alias.x": false, "sequence.editor": false, "commit.gpgsign": false,
	} {
		if got := copiedKey(key); got != want {
			t.Errorf("copiedKey(%q) = %v, want %v", key, got, want)
		}
	}
	list := "system\x00credential.helper\ncache\x00global\x00credential.helper\n\x00global\x00credential.helper\nstore --file \"~/a b\"\x00" +
		"global\x00core.fsmonitor\ntrue\x00local\x00user.email\nlocal@x\x00global\x00user.email\nme@x\x00" +
		"global\x00url.ssh://git@host:2222/.insteadof\ngh:\x00global\x00http.extraheader\nA: b\\c\x00global\x00filter.lfs.required\x00"
	entries := parseConfigList(list)
	want := []configEntry{{"credential.helper", "cache"}, {"credential.helper", ""}, {"credential.helper", "store --file \"~/a b\""},
		{"user.email", "me@x"}, {"url.ssh://git@host:2222/.insteadof", "gh:"}, {"http.extraheader", "A: b\\c"}, {"filter.lfs.required", ""}}
	if !slices.Equal(entries, want) {
		t.Fatalf("kept %q\nwant %q", entries, want)
	}
	f := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(f, formatConfig(entries), 0o600); err != nil {
		t.Fatal(err)
	}
	var back []configEntry
	for _, e := range strings.Split(gitT(t, t.TempDir(), "config", "--file", f, "--list", "-z"), "\x00") {
		if k, v, _ := strings.Cut(e, "\n"); k != "" {
			back = append(back, configEntry{k, v})
		}
	}
	// A key written without a value reads back as an empty one.
	want[len(want)-1] = configEntry{"filter.lfs.required", ""}
	if !slices.Equal(back, want) {
		t.Fatalf("written and read back:\n%q\nwant\n%q", back, want)
	}
}
