// Package preflight owns the checks made before a launch starts anything:
// tmux present and new enough, git present and new enough where the
// command needs it, every
// executor the selected waves need on PATH, and claude usable by the
// current user; on a kubernetes lane, the cluster (Cluster). It reports
// problems with their fix; it changes nothing. `launch`, `resume`,
// `backlog run` and `doctor` share it, so a problem reads the same
// everywhere: doctor's findings (Finding, and the JSON Report) are made
// here too, from the same checks, and cmd only prints them.
package preflight

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/gitops"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Kind groups problems by what is missing.
type Kind string

// Problem kinds. An executor problem means no usable executor (exit 43);
// the others are plain errors (exit 1).
const (
	KindTmux     Kind = "tmux"
	KindGit      Kind = "git"
	KindExecutor Kind = "executor"
	// KindKubernetes is a cluster check of a kubernetes lane failing
	// (package kube makes them).
	KindKubernetes Kind = "kubernetes"
)

// Minimum tmux version (we rely on remain-on-exit per server, user options
// on sessions, -e on new-session).
const (
	TmuxMajor = 3
	TmuxMinor = 2
)

// Minimum git version where git is needed: backlog merges are checked
// with `git merge-tree --write-tree`, new in 2.38.
const (
	GitMajor = 2
	GitMinor = 38
)

// Problem is one thing that would make the launch fail, with how to fix it.
type Problem struct {
	Kind    Kind
	Subject string // tmux, git, or the executor's command
	Msg     string // what is wrong, one line
	Fix     string // what to do about it, one line
}

// String is the problem on one line: subject, what is wrong, the fix.
func (p Problem) String() string {
	s := p.Subject + ": " + p.Msg
	if p.Fix != "" {
		s += "; " + p.Fix
	}
	return s
}

// Executor is one executor command the selected waves need.
type Executor struct {
	ID      string   // executor id: claude, codex, opencode, shell
	Command string   // the program looked up on PATH
	Agents  []string // who needs it, e.g. "wave 0 A1"
	// ClaudeBypass is set when claude runs with permission mode
	// bypassPermissions, which claude refuses as root outside a sandbox.
	ClaudeBypass bool
	// Env is what the agent gets on top of the launcher's environment;
	// Scrub is what it loses.
	Env   map[string]string
	Scrub []string
	// Chosen is what picked this executor for its agents: the fix for a
	// missing one names that, since --executor moves only agents that
	// name none.
	Chosen Chosen
}

// Chosen is what picked an agent's executor.
type Chosen int

// What picks an agent's executor. The first that is set wins: the
// agent's id, its profile's, the lane's default for its role, and only
// then --executor or executors.default.
const (
	ChosenByDefault Chosen = iota // --executor, else executors.default
	ChosenByAgent                 // the agent's `### Executor` id
	ChosenByProfile               // the id of the agent's executor profile
	ChosenByRole                  // runtimePolicy.defaultExecutorByRole
)

// missingFix is the fix for an executor not on PATH, by what chose it.
func (c Chosen) missingFix() string {
	const install = "install it, put it on PATH, or "
	switch c {
	case ChosenByAgent:
		return install + "change the `- id:` under those agents' `### Executor` in their wave file (--executor changes only agents that name no executor)"
	case ChosenByProfile:
		return install + "change the id of their executor profile (executors.profiles.<name>.id in wave.config.yaml; --executor changes only agents that name no executor)"
	case ChosenByRole:
		return install + "change runtimePolicy.defaultExecutorByRole in wave.config.yaml (it wins over --executor)"
	}
	return install + "run those agents on another executor with --executor ID (or executors.default in wave.config.yaml)"
}

// Subject names the executor in problems: "executor claude", or
// "executor shell (./run-agent.sh)" when the command is not the id.
func (e Executor) Subject() string {
	if e.Command == e.ID {
		return "executor " + e.ID
	}
	return "executor " + e.ID + " (" + termtext.Escape(e.Command) + ")"
}

// Needs is what a command is about to use.
type Needs struct {
	Tmux      bool
	Git       bool
	Executors []Executor
}

// Add records that agent needs executor e, merging agents of one command.
func (n *Needs) Add(e Executor, agent string) {
	for i := range n.Executors {
		x := &n.Executors[i]
		if x.ID == e.ID && x.Command == e.Command && x.ClaudeBypass == e.ClaudeBypass && x.Chosen == e.Chosen &&
			mapsEqual(x.Env, e.Env) && slices.Equal(x.Scrub, e.Scrub) {
			if !slices.Contains(x.Agents, agent) {
				x.Agents = append(x.Agents, agent)
			}
			return
		}
	}
	e.Agents = append(slices.Clone(e.Agents), agent)
	n.Executors = append(n.Executors, e)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Host is what the checks look at: PATH, the environment, the effective
// user and tmux. System() is the real machine; tests set the fields.
type Host struct {
	LookPath    func(string) (string, error)
	Getenv      func(string) string
	Euid        func() int
	TmuxVersion func(context.Context) (string, error)
	// GitVersion is the installed git's major and minor version.
	GitVersion func(context.Context) (major, minor int, err error)
}

// System is the machine this process runs on; tmux is asked through
// tmuxadapter (`tmux -V`, which needs no server), git through gitops.
func System() Host {
	return Host{
		LookPath: exec.LookPath,
		Getenv:   os.Getenv,
		Euid:     os.Geteuid,
		TmuxVersion: func(ctx context.Context) (string, error) {
			return tmuxadapter.New("wave-preflight").Version(ctx)
		},
		GitVersion: gitops.Version,
	}
}

// Check runs every check needs asks for on this machine.
func Check(ctx context.Context, needs Needs) []Problem { return System().Check(ctx, needs) }

// Check runs every check needs asks for on h, in a stable order: tmux,
// git, then executors by command.
func (h Host) Check(ctx context.Context, needs Needs) []Problem {
	var ps []Problem
	if needs.Tmux {
		if p := h.tmux(ctx); p != nil {
			ps = append(ps, *p)
		}
	}
	if needs.Git {
		if p := h.git(ctx); p != nil {
			ps = append(ps, *p)
		}
	}
	exs := slices.Clone(needs.Executors)
	slices.SortStableFunc(exs, func(a, b Executor) int { return strings.Compare(a.Command, b.Command) })
	for _, e := range exs {
		ps = append(ps, h.executor(e)...)
	}
	return ps
}

func (h Host) tmux(ctx context.Context) *Problem {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	v, err := h.TmuxVersion(cctx)
	fix := fmt.Sprintf("install tmux >= %d.%d (e.g. `apt-get install tmux`, `brew install tmux`)", TmuxMajor, TmuxMinor)
	switch {
	case errors.Is(err, tmuxadapter.ErrBinaryMissing):
		return &Problem{Kind: KindTmux, Subject: "tmux", Msg: "not found on PATH", Fix: fix}
	case err != nil:
		return &Problem{Kind: KindTmux, Subject: "tmux", Msg: "`tmux -V` failed: " + oneLine(err.Error()), Fix: fix}
	case !TmuxAtLeast(v, TmuxMajor, TmuxMinor):
		return &Problem{Kind: KindTmux, Subject: "tmux", Msg: fmt.Sprintf("%q is older than %d.%d", v, TmuxMajor, TmuxMinor), Fix: fix}
	}
	return nil
}

func (h Host) git(ctx context.Context) *Problem {
	fix := fmt.Sprintf("install git >= %d.%d", GitMajor, GitMinor)
	if _, err := h.LookPath("git"); err != nil {
		return &Problem{Kind: KindGit, Subject: "git", Msg: "not found on PATH", Fix: fix}
	}
	if h.GitVersion == nil {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	major, minor, err := h.GitVersion(cctx)
	switch {
	case err != nil:
		return &Problem{Kind: KindGit, Subject: "git", Msg: "`git version` failed: " + oneLine(err.Error()), Fix: fix}
	case major < GitMajor || major == GitMajor && minor < GitMinor:
		return &Problem{Kind: KindGit, Subject: "git", Fix: fix,
			Msg: fmt.Sprintf("%d.%d is older than %d.%d (backlog merges need `git merge-tree --write-tree`)", major, minor, GitMajor, GitMinor)}
	}
	return nil
}

func (h Host) executor(e Executor) []Problem {
	who := make([]string, len(e.Agents))
	for i, a := range e.Agents {
		who[i] = termtext.Escape(a)
	}
	return h.executorFor(e, strings.Join(who, ", "))
}

func (h Host) executorFor(e Executor, who string) []Problem {
	subject := e.Subject()
	if _, err := h.LookPath(e.Command); err != nil {
		return []Problem{{Kind: KindExecutor, Subject: subject, Msg: "not on PATH (needed by " + who + ")", Fix: e.Chosen.missingFix()}}
	}
	if e.ID == "claude" && e.ClaudeBypass && h.Euid() == 0 && !h.sandboxed(e) {
		return []Problem{{Kind: KindExecutor, Subject: subject,
			Msg: "runs as root with permission mode bypassPermissions, which claude refuses unless IS_SANDBOX=1 (needed by " + who + ")",
			Fix: "run as a non-root user, or set IS_SANDBOX=1 in the environment if this machine is a disposable sandbox"}}
	}
	return nil
}

// sandboxed reports whether the agent's environment will carry
// IS_SANDBOX=1: its own env first, else the launcher's unless scrubbed.
func (h Host) sandboxed(e Executor) bool {
	if v, ok := e.Env["IS_SANDBOX"]; ok {
		return v == "1"
	}
	if slices.Contains(e.Scrub, "IS_SANDBOX") {
		return false
	}
	return h.Getenv("IS_SANDBOX") == "1"
}

// NoUsableExecutor reports whether any problem is an executor's: the
// launch could start, but some agent could not run (exit 43).
func NoUsableExecutor(ps []Problem) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Kind == KindExecutor })
}

// Error is the problems of a preflight as one error, one line each.
type Error struct {
	What     string // e.g. "launch lane main"
	Problems []Problem
}

// ExitCode is the exit of a command its problems stopped: 43 when an
// executor is unusable (a person must install or allow it), else 1.
func (e *Error) ExitCode() int {
	if NoUsableExecutor(e.Problems) {
		return exitcode.NeedsHuman
	}
	return exitcode.Failed
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot %s, nothing was started:", e.What)
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.String())
	}
	return b.String()
}

var tmuxVersionRe = regexp.MustCompile(`(\d+)\.(\d+)`)

// TmuxAtLeast reports whether a `tmux -V` string ("tmux 3.3a", "tmux
// next-3.4") is at least major.minor.
func TmuxAtLeast(v string, major, minor int) bool {
	m := tmuxVersionRe.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a > major || a == major && b >= minor
}

// oneLine keeps the first line of s, so a problem stays on its line.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Unseen lists the variables set in h's environment that e's agents will
// not see: removed by the scrub list and not given back by their own env.
// A shell's ANTHROPIC_BASE_URL is the usual one: the user tests claude
// against it, the agents go to the default endpoint.
func (h Host) Unseen(e Executor) []string {
	var out []string
	for _, k := range e.Scrub {
		if _, given := e.Env[k]; !given && h.Getenv(k) != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}
