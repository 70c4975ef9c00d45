package preflight

import (
	"context"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/kube"
)

func msgs(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(string(f.Level) + " " + f.Name() + " | " + f.Msg + "\n")
	}
	return b.String()
}

// doctor says what it found for tmux and git, and each problem the launch
// would stop on, with the same words.
func TestToolsSayTheVersionsOrTheLaunchsProblem(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    Host
		want string
	}{
		{"both fine", host([]string{"git"}, 1000, nil, "tmux 3.4", nil),
			"ok tmux | tmux: tmux 3.4\nok git | git: 2.43 (>= 2.38: backlog merges can use merge-tree --write-tree)\n"},
		{"old tmux", host([]string{"git"}, 1000, nil, "tmux 2.9", nil),
			"error tmux | tmux: \"tmux 2.9\" is older than 3.2; install tmux >= 3.2 (e.g. `apt-get install tmux`, `brew install tmux`)\n" +
				"ok git | git: 2.43 (>= 2.38: backlog merges can use merge-tree --write-tree)\n"},
		{"no git", host(nil, 1000, nil, "tmux 3.4", nil),
			"ok tmux | tmux: tmux 3.4\nerror git | git: not found on PATH; install git >= 2.38\n"},
	} {
		if got := msgs(tc.h.Tools(context.Background())); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// Every executor is named once: found, or its launch problem; on a
// kubernetes lane none is looked for here.
func TestExecutorsAreFoundOrTheLaunchsProblem(t *testing.T) {
	var n Needs
	n.Add(claude(), "wave 0 A1")
	n.Add(claude(), "wave 0 A2")
	n.Add(Executor{ID: "codex", Command: "codex"}, "wave 1 A3")
	h := host([]string{"claude"}, 1000, nil, "tmux 3.4", nil)
	want := "error executor codex | executor codex: not on PATH (needed by wave 1 A3); install it, put it on PATH, or run those agents on another executor with --executor ID (or executors.default in wave.config.yaml)\n" +
		"ok executor claude | executor claude: found\n"
	if got := msgs(h.Executors(context.Background(), n)); got != want {
		t.Errorf("executors:\n%s\nwant\n%s", got, want)
	}
	if got, want := msgs(ImageExecutors(n, "ghcr.io/x/agents:1")), "ok executors | executors: claude, codex run in the image ghcr.io/x/agents:1 (not checked on this machine)\n"; got != want {
		t.Errorf("in an image:\n%s\nwant\n%s", got, want)
	}
	if got := ImageExecutors(Needs{}, "img"); got != nil {
		t.Errorf("no executors in an image: %v, want none", got)
	}
}

// The backlog workers' executor is checked as backlog run checks it, with
// the fix naming the workers' own keys, and each shell variable they will
// not see is a warning.
func TestWorkersNameTheirFixAndTheVariablesTheyLose(t *testing.T) {
	need := Executor{ID: "claude", Command: "claude", Scrub: []string{"ANTHROPIC_BASE_URL"}}
	h := host(nil, 1000, map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, "tmux 3.4", nil)
	got := msgs(h.Workers(context.Background(), need, "claude"))
	want := "error backlog | backlog workers: executor claude: not on PATH (needed by backlog workers); install it, put it on PATH, or give the workers another executor (backlog.executor.id, or --executor)\n" +
		"warn backlog | backlog workers: $ANTHROPIC_BASE_URL is set in this shell, but workers will not see it (executors.env.scrub removes it); to give it to them set it in executors.claude.env, or drop it from executors.env.scrub\n"
	if got != want {
		t.Errorf("workers:\n%s\nwant\n%s", got, want)
	}
	h = host([]string{"claude"}, 1000, nil, "tmux 3.4", nil)
	if got, want := msgs(h.Workers(context.Background(), need, "claude")), "ok backlog | backlog workers: executor claude: found\n"; got != want {
		t.Errorf("workers found:\n%s\nwant\n%s", got, want)
	}
}

// The GitHub source's token is reported set or not, never its value.
func TestGitHubTokenIsReportedWithoutItsValue(t *testing.T) {
	cfg := config.Default()
	cfg.GitHub.Owner, cfg.GitHub.Repo, cfg.GitHub.TokenEnv = "o", "r", "MY_TOKEN"
	unset := host(nil, 1000, nil, "", nil).GitHubToken(cfg)
	if len(unset) != 1 || unset[0].Level != LevelError || unset[0].Fix != "export a token in $MY_TOKEN (github.tokenEnv)" {
		t.Errorf("unset token: %+v", unset)
	}
	set := host(nil, 1000, map[string]string{"MY_TOKEN": "s3cret"}, "", nil).GitHubToken(cfg)
	if len(set) != 1 || set[0].Level != LevelOK || strings.Contains(set[0].Msg, "s3cret") {
		t.Errorf("set token: %+v", set)
	}
	if got := host(nil, 1000, nil, "", nil).GitHubToken(config.Default()); got != nil {
		t.Errorf("local source: %+v, want nothing", got)
	}
}

// A launch stops on the failed cluster checks only; doctor shows every one.
func TestClusterChecksAreLaunchProblemsWhenFailedAndDoctorLinesAlways(t *testing.T) {
	cs := []kube.Check{
		{Name: "cluster", Status: kube.CheckOK, Msg: "https://k answers"},
		{Name: "permission", Status: kube.CheckFailed, Msg: "cannot create jobs.batch in agents", Fix: "grant it"},
		{Name: "service account", Status: kube.CheckSkipped, Msg: "cannot be read"},
	}
	ps := ClusterProblems(cs)
	if len(ps) != 1 || ps[0].Kind != KindKubernetes || ps[0].String() != "kubernetes permission: cannot create jobs.batch in agents; grant it" {
		t.Errorf("problems %+v", ps)
	}
	want := "ok kubernetes cluster | kubernetes cluster: https://k answers\n" +
		"error kubernetes permission | kubernetes permission: cannot create jobs.batch in agents; grant it\n" +
		"skip kubernetes service account | kubernetes service account: cannot be read\n"
	if got := msgs(ClusterFindings(cs)); got != want {
		t.Errorf("findings:\n%s\nwant\n%s", got, want)
	}
}

// The JSON report keeps each finding on one line, repeats errors and
// warnings, and has empty lists, not null, on a clean run.
func TestReportListsErrorsAndWarningsOnOneLineEach(t *testing.T) {
	r := NewReport("/repo", []Finding{
		{Level: LevelOK, Msg: "tmux: 3.4"},
		{Level: LevelError, Check: "config", Msg: "config: bad\nkey", Fix: "fix it"},
		{Level: LevelWarn, Msg: "lane main: stale"},
	})
	if r.OK || len(r.Errors) != 1 || r.Errors[0] != "config: bad key" || len(r.Warnings) != 1 || r.Findings[0].Check != "tmux" || r.Findings[2].Check != "lane" {
		t.Errorf("report %+v", r)
	}
	clean := NewReport("/repo", nil)
	if !clean.OK || clean.Errors == nil || clean.Warnings == nil || clean.Findings == nil {
		t.Errorf("clean report %+v", clean)
	}
}

// A launch an unusable executor stopped needs a person (43); tmux or the
// cluster missing is a plain failure (1).
func TestPreflightErrorExitsNeedsHumanOnlyForAnExecutor(t *testing.T) {
	exec := &Error{Problems: []Problem{{Kind: KindTmux}, {Kind: KindExecutor}}}
	plain := &Error{Problems: []Problem{{Kind: KindTmux}, {Kind: KindKubernetes}}}
	if exec.ExitCode() != exitcode.NeedsHuman || plain.ExitCode() != exitcode.Failed {
		t.Errorf("exit codes %d and %d, want %d and %d", exec.ExitCode(), plain.ExitCode(), exitcode.NeedsHuman, exitcode.Failed)
	}
}

// backlog run stops before claiming anything when the workers' executor
// is missing, and the fix names the workers' keys; an in-process worker
// needs only tmux and git.
func TestBacklogPreflightNamesTheWorkersKeys(t *testing.T) {
	h := host([]string{"git"}, 1000, nil, "tmux 3.4", nil)
	err := h.Backlog(context.Background(), Executor{ID: "codex", Command: "codex"}, true, "backlog run lane main")
	pe, ok := err.(*Error)
	if !ok || pe.ExitCode() != exitcode.NeedsHuman || len(pe.Problems) != 1 || pe.Problems[0].Fix != workersFix {
		t.Fatalf("missing executor: %v", err)
	}
	if !strings.Contains(err.Error(), "cannot backlog run lane main, nothing was started") {
		t.Errorf("error %q does not name the command", err)
	}
	if err := h.Backlog(context.Background(), Executor{}, false, "backlog run lane main"); err != nil {
		t.Errorf("in-process workers: %v", err)
	}
}
