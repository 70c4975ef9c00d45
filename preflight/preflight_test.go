package preflight

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// host is a machine with the given programs on PATH, euid, environment
// and `tmux -V` answer.
func host(onPath []string, euid int, env map[string]string, tmux string, tmuxErr error) Host {
	return Host{
		LookPath: func(name string) (string, error) {
			for _, p := range onPath {
				if p == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", exec.ErrNotFound
		},
		Getenv:      func(k string) string { return env[k] },
		Euid:        func() int { return euid },
		TmuxVersion: func(context.Context) (string, error) { return tmux, tmuxErr },
		GitVersion:  func(context.Context) (int, int, error) { return 2, 43, nil },
	}
}

// withGit is h whose git answers `git version` with major.minor or err.
func withGit(h Host, major, minor int, err error) Host {
	h.GitVersion = func(context.Context) (int, int, error) { return major, minor, err }
	return h
}

func claude(agents ...string) Executor {
	return Executor{ID: "claude", Command: "claude", Agents: agents, ClaudeBypass: true}
}

func TestCheck(t *testing.T) {
	missing := &tmuxadapter.Error{Err: tmuxadapter.ErrBinaryMissing}
	for _, tc := range []struct {
		name  string
		h     Host
		needs Needs
		want  []string // Problem.String prefixes, in order
		exec  bool     // NoUsableExecutor
	}{
		{"all there", host([]string{"git", "claude"}, 1000, nil, "tmux 3.3a", nil),
			Needs{Tmux: true, Git: true, Executors: []Executor{claude("wave 0 A1")}}, nil, false},
		{"no tmux", host(nil, 1000, nil, "", missing), Needs{Tmux: true},
			[]string{"tmux: not found on PATH; install tmux >= 3.2"}, false},
		{"old tmux", host(nil, 1000, nil, "tmux 3.1c", nil), Needs{Tmux: true},
			[]string{`tmux: "tmux 3.1c" is older than 3.2`}, false},
		{"tmux not asked", host(nil, 1000, nil, "", missing), Needs{}, nil, false},
		{"no git", host(nil, 1000, nil, "tmux 3.4", nil), Needs{Git: true},
			[]string{"git: not found on PATH; install git >= 2.38"}, false},
		{"git too old for merge-tree --write-tree", withGit(host([]string{"git"}, 1000, nil, "", nil), 2, 37, nil), Needs{Git: true},
			[]string{"git: 2.37 is older than 2.38 (backlog merges need `git merge-tree --write-tree`); install git >= 2.38"}, false},
		{"git 2.38 is enough", withGit(host([]string{"git"}, 1000, nil, "", nil), 2, 38, nil), Needs{Git: true}, nil, false},
		{"git 3.0 is enough", withGit(host([]string{"git"}, 1000, nil, "", nil), 3, 0, nil), Needs{Git: true}, nil, false},
		{"git version unreadable", withGit(host([]string{"git"}, 1000, nil, "", nil), 0, 0, errors.New("git version: unexpected output \"hub 2\"")),
			Needs{Git: true}, []string{"git: `git version` failed: git version: unexpected output"}, false},
		{"git not asked", withGit(host(nil, 1000, nil, "", nil), 1, 9, nil), Needs{}, nil, false},
		{"executors sorted, agents named", host(nil, 1000, nil, "", nil),
			Needs{Executors: []Executor{{ID: "codex", Command: "codex", Agents: []string{"wave 1 A2"}},
				{ID: "shell", Command: "./run.sh", Agents: []string{"wave 1 A3", "wave 2 A1"}}}},
			[]string{"executor shell (./run.sh): not on PATH (needed by wave 1 A3, wave 2 A1); install it",
				"executor codex: not on PATH (needed by wave 1 A2); install it"}, true},
		{"claude as root", host([]string{"claude"}, 0, nil, "", nil), Needs{Executors: []Executor{claude("wave 0 A1")}},
			[]string{"executor claude: runs as root with permission mode bypassPermissions, which claude refuses unless IS_SANDBOX=1 (needed by wave 0 A1); run as a non-root user"}, true},
		{"claude as root in a sandbox", host([]string{"claude"}, 0, map[string]string{"IS_SANDBOX": "1"}, "", nil),
			Needs{Executors: []Executor{claude("wave 0 A1")}}, nil, false},
		{"IS_SANDBOX scrubbed from the agent", host([]string{"claude"}, 0, map[string]string{"IS_SANDBOX": "1"}, "", nil),
			Needs{Executors: []Executor{func() Executor { e := claude("wave 0 A1"); e.Scrub = []string{"IS_SANDBOX"}; return e }()}},
			[]string{"executor claude: runs as root"}, true},
		{"IS_SANDBOX in the agent's own env", host([]string{"claude"}, 0, nil, "", nil),
			Needs{Executors: []Executor{func() Executor { e := claude("wave 0 A1"); e.Env = map[string]string{"IS_SANDBOX": "1"}; return e }()}},
			nil, false},
		{"claude as root, other permission mode", host([]string{"claude"}, 0, nil, "", nil),
			Needs{Executors: []Executor{{ID: "claude", Command: "claude", Agents: []string{"wave 0 A1"}}}}, nil, false},
		{"agent id with an escape is escaped", host(nil, 1000, nil, "", nil),
			Needs{Executors: []Executor{{ID: "codex", Command: "codex", Agents: []string{"wave 0 \x1b[2J"}}}},
			[]string{`executor codex: not on PATH (needed by wave 0 \x1b[2J)`}, true},
		{"command with a bidi override is escaped", host(nil, 1000, nil, "", nil),
			Needs{Executors: []Executor{{ID: "shell", Command: "./run\u202ehs.sh", Agents: []string{"wave 0 A1"}}}},
			[]string{`executor shell (./run\u202ehs.sh): not on PATH (needed by wave 0 A1)`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := tc.h.Check(context.Background(), tc.needs)
			if len(ps) != len(tc.want) {
				t.Fatalf("problems %v, want %d", ps, len(tc.want))
			}
			for i, p := range ps {
				if s := p.String(); !strings.HasPrefix(s, tc.want[i]) || strings.Contains(s, "\n") {
					t.Errorf("problem %d: %q, want prefix %q on one line", i, s, tc.want[i])
				}
			}
			if got := NoUsableExecutor(ps); got != tc.exec {
				t.Errorf("NoUsableExecutor = %v, want %v", got, tc.exec)
			}
		})
	}
}

func TestNeedsAddMergesAgentsOfOneExecutor(t *testing.T) {
	var n Needs
	n.Add(claude(), "wave 0 A1")
	n.Add(claude(), "wave 0 A2")
	n.Add(claude(), "wave 0 A2")
	n.Add(Executor{ID: "codex", Command: "codex"}, "wave 0 A3")
	if len(n.Executors) != 2 || strings.Join(n.Executors[0].Agents, ",") != "wave 0 A1,wave 0 A2" {
		t.Fatalf("needs %+v", n.Executors)
	}
}

func TestErrorIsOneLinePerProblem(t *testing.T) {
	err := &Error{What: "launch lane main", Problems: []Problem{
		{Subject: "tmux", Msg: "not found on PATH", Fix: "install tmux"},
		{Subject: "executor codex", Msg: "not on PATH (needed by wave 0 A1)"},
	}}
	want := "cannot launch lane main, nothing was started:\n  - tmux: not found on PATH; install tmux\n  - executor codex: not on PATH (needed by wave 0 A1)"
	if err.Error() != want {
		t.Fatalf("got\n%s\nwant\n%s", err, want)
	}
}

func TestTmuxAtLeast(t *testing.T) {
	for v, want := range map[string]bool{
		"tmux 3.2": true, "tmux 3.3a": true, "tmux 3.1c": false, "tmux 2.9": false,
		"tmux 4.0": true, "tmux next-3.5": true, "tmux master": false, "": false,
	} {
		if got := TmuxAtLeast(v, 3, 2); got != want {
			t.Errorf("TmuxAtLeast(%q) = %v", v, got)
		}
	}
}

// TestSystemFindsRealTmux runs the real check against this machine's tmux,
// which the test suite needs anyway.
func TestSystemFindsRealTmux(t *testing.T) {
	if ps := Check(context.Background(), Needs{Tmux: true}); len(ps) != 0 {
		t.Fatalf("tmux on this machine: %v", ps)
	}
	h := System()
	h.TmuxVersion = func(ctx context.Context) (string, error) {
		return tmuxadapter.New("wave-preflight", tmuxadapter.WithBinary("/nonexistent/tmux")).Version(ctx)
	}
	ps := h.Check(context.Background(), Needs{Tmux: true})
	if len(ps) != 1 || ps[0].Msg != "not found on PATH" {
		t.Fatalf("missing tmux binary: %v", ps)
	}
}

func TestUnseenNamesShellVariablesTheAgentsLose(t *testing.T) {
	env := map[string]string{"ANTHROPIC_BASE_URL": "http://proxy", "ANTHROPIC_CUSTOM_HEADERS": "", "GH_TOKEN": "x"}
	h := Host{Getenv: func(k string) string { return env[k] }}
	for _, tc := range []struct {
		name string
		e    Executor
		want []string
	}{
		{"scrubbed and set", Executor{Scrub: []string{"ANTHROPIC_BASE_URL", "ANTHROPIC_CUSTOM_HEADERS"}}, []string{"ANTHROPIC_BASE_URL"}},
		{"given back by the agent's env", Executor{Scrub: []string{"ANTHROPIC_BASE_URL"}, Env: map[string]string{"ANTHROPIC_BASE_URL": "http://mine"}}, nil},
		{"not scrubbed", Executor{}, nil},
	} {
		if got := h.Unseen(tc.e); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A missing executor's fix names what chose it: --executor moves only
// the agents that name none, so the others are told where theirs is set,
// and agents chosen differently are named on lines of their own.
func TestAMissingExecutorsFixNamesWhatChoseIt(t *testing.T) {
	var n Needs
	for i, c := range []Chosen{ChosenByDefault, ChosenByAgent, ChosenByProfile, ChosenByRole} {
		n.Add(Executor{ID: "codex", Command: "codex", Chosen: c}, "wave 0 A"+string(rune('1'+i)))
	}
	ps := host(nil, 1000, nil, "tmux 3.4", nil).Check(context.Background(), n)
	want := []string{
		"run those agents on another executor with --executor ID (or executors.default in wave.config.yaml)",
		"change the `- id:` under those agents' `### Executor` in their wave file (--executor changes only agents that name no executor)",
		"change the id of their executor profile (executors.profiles.<name>.id in wave.config.yaml; --executor changes only agents that name no executor)",
		"change runtimePolicy.defaultExecutorByRole in wave.config.yaml (it wins over --executor)",
	}
	if len(ps) != len(want) {
		t.Fatalf("%d problems, want one per way of choosing: %v", len(ps), ps)
	}
	for i, p := range ps {
		if p.Fix != "install it, put it on PATH, or "+want[i] || !strings.HasSuffix(p.Msg, "(needed by wave 0 A"+string(rune('1'+i))+")") {
			t.Errorf("problem %d: %s", i, p)
		}
	}
}
