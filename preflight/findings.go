package preflight

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"slices"
	"strings"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Level is how bad a finding is.
type Level string

// Finding levels: skip is a check that could not be made with this
// user's rights.
const (
	LevelOK    Level = "ok"
	LevelWarn  Level = "warn"
	LevelSkip  Level = "skip"
	LevelError Level = "error"
)

// Finding is one of doctor's check results, for the text line or the
// JSON report. Check names what was checked (tmux, git, config, an
// executor, lane); when empty it is the message's leading word (Name).
// Fix, when known, says what to do; Msg already carries it.
type Finding struct {
	Level Level
	Check string
	Msg   string
	Fix   string
}

// Name is the finding's check, else the word its message starts with
// ("tmux: 3.4" is check tmux).
func (f Finding) Name() string {
	if f.Check != "" {
		return f.Check
	}
	head, _, _ := strings.Cut(f.Msg, ":")
	if i := strings.IndexByte(head, ' '); i > 0 {
		head = head[:i]
	}
	return head
}

// ProblemFinding is a problem as an error finding.
func ProblemFinding(p Problem) Finding {
	return Finding{Level: LevelError, Msg: p.String(), Check: p.Subject, Fix: p.Fix}
}

// Flat keeps a finding's text on its line: every line of s, joined.
func Flat(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }

// Tools reports tmux and git as a launch's preflight checks them: each
// problem, else the version found.
func (h Host) Tools(ctx context.Context) []Finding {
	var fs []Finding
	for _, p := range h.Check(ctx, Needs{Tmux: true, Git: true}) {
		fs = append(fs, ProblemFinding(p))
	}
	if !slices.ContainsFunc(fs, func(f Finding) bool { return strings.HasPrefix(f.Msg, "tmux:") }) {
		v, _ := h.TmuxVersion(ctx)
		fs = append([]Finding{{Level: LevelOK, Check: "tmux", Msg: "tmux: " + v}}, fs...)
	}
	if !slices.ContainsFunc(fs, func(f Finding) bool { return strings.HasPrefix(f.Msg, "git:") }) {
		major, minor, _ := h.GitVersion(ctx)
		fs = append(fs, Finding{Level: LevelOK, Check: "git", Msg: fmt.Sprintf("git: %d.%d (>= %d.%d: backlog merges can use merge-tree --write-tree)",
			major, minor, GitMajor, GitMinor)})
	}
	return fs
}

// Executors reports every executor needs names, checked as a launch
// checks them (on PATH; claude usable as this user): each problem, else
// "found". needs.Tmux and needs.Git are ignored.
func (h Host) Executors(ctx context.Context, needs Needs) []Finding {
	needs.Tmux, needs.Git = false, false
	bad := map[string]bool{}
	var fs []Finding
	for _, p := range h.Check(ctx, needs) {
		fs = append(fs, ProblemFinding(p))
		bad[p.Subject] = true
	}
	seen := map[string]bool{}
	for _, x := range needs.Executors {
		subject := x.Subject()
		if !bad[subject] && !seen[subject] {
			seen[subject] = true
			fs = append(fs, Finding{Level: LevelOK, Check: subject, Msg: subject + ": found"})
		}
	}
	return fs
}

// ImageExecutors is the executors of a kubernetes lane: they run in the
// lane's image, so nothing is checked here and one line says so.
func ImageExecutors(needs Needs, image string) []Finding {
	var ids []string
	for _, x := range needs.Executors {
		if !slices.Contains(ids, x.ID) {
			ids = append(ids, x.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return []Finding{{Level: LevelOK, Check: "executors", Msg: fmt.Sprintf("executors: %s run in the image %s (not checked on this machine)",
		strings.Join(ids, ", "), image)}}
}

// workersFix is the fix for the workers' executor not on PATH: the keys
// that choose it are the workers' own, not a wave's.
const workersFix = "install it, put it on PATH, or give the workers another executor (backlog.executor.id, or --executor)"

// Backlog checks, before anything is claimed or pushed, what `backlog
// run` needs from this machine: tmux, git and the workers' executor
// (need; ok false when the workers run in-process), resolved as the
// workers resolve it. what names the command ("backlog run lane main").
// The error is an *Error (see ExitCode).
func (h Host) Backlog(ctx context.Context, need Executor, ok bool, what string) error {
	needs := Needs{Tmux: true, Git: true}
	if ok {
		needs.Add(need, "backlog workers")
	}
	ps := h.Check(ctx, needs)
	if len(ps) == 0 {
		return nil
	}
	for i := range ps {
		if ps[i].Kind == KindExecutor && strings.Contains(ps[i].Msg, "not on PATH") {
			ps[i].Fix = workersFix
		}
	}
	return &Error{What: what, Problems: ps}
}

// Workers checks the backlog workers' executor (need, as the workers
// resolve it; id is its executor id) as backlog run's preflight does,
// and names each variable of this shell a worker will not see.
func (h Host) Workers(ctx context.Context, need Executor, id string) []Finding {
	var fs []Finding
	need.Agents = []string{"backlog workers"}
	for _, p := range h.Check(ctx, Needs{Executors: []Executor{need}}) {
		if strings.Contains(p.Msg, "not on PATH") {
			p.Fix = workersFix
		}
		fs = append(fs, Finding{Level: LevelError, Msg: "backlog workers: " + p.String()})
	}
	if len(fs) == 0 {
		fs = append(fs, Finding{Level: LevelOK, Msg: "backlog workers: " + need.Subject() + ": found"})
	}
	for _, k := range h.Unseen(need) {
		fs = append(fs, Finding{Level: LevelWarn, Msg: fmt.Sprintf("backlog workers: $%s is set in this shell, but workers will not see it (executors.env.scrub removes it); to give it to them set it in executors.%s.env, or drop it from executors.env.scrub", k, id)})
	}
	return fs
}

// GitHubToken reports, for the GitHub backlog source, whether its token
// variable is set in h's environment (its value is never printed);
// nothing for another source.
func (h Host) GitHubToken(cfg *config.Config) []Finding {
	if cfg.SourceKind() != config.SourceGitHub {
		return nil
	}
	repo := cfg.GitHub.Owner + "/" + cfg.GitHub.Repo
	env := cfg.GitHub.TokenEnv
	if h.Getenv(env) == "" {
		return []Finding{{Level: LevelError, Check: "backlog", Msg: fmt.Sprintf("backlog: github source %s: $%s is not set; export a token there (github.tokenEnv) before backlog plan/run", repo, env),
			Fix: fmt.Sprintf("export a token in $%s (github.tokenEnv)", env)}}
	}
	return []Finding{{Level: LevelOK, Check: "backlog", Msg: fmt.Sprintf("backlog: github source %s, token in $%s", repo, env)}}
}

// Lane reports the lane's lock (who holds it, or that it is free) and
// tmux sessions left on its socket with no launcher.
func Lane(ctx context.Context, layout lanes.Layout, name string) []Finding {
	var fs []Finding
	lp := layout.LockPath()
	live := lanes.Held(lp)
	if info, err := lanes.ReadLockInfo(lp); err == nil {
		if live {
			fs = append(fs, Finding{Level: LevelOK, Check: "lane", Msg: fmt.Sprintf("lane %s: launcher pid %d is running", name, info.Pid)})
		} else {
			fs = append(fs, Finding{Level: LevelOK, Check: "lane", Msg: fmt.Sprintf("lane %s: no launcher; the lock was last held by pid %d and is free (no cleanup needed)", name, info.Pid)})
		}
	} else if live {
		fs = append(fs, Finding{Level: LevelOK, Check: "lane", Msg: fmt.Sprintf("lane %s: a launcher holds the lane (unreadable lock body: %v)", name, err)})
	} else if !errors.Is(err, iofs.ErrNotExist) {
		fs = append(fs, Finding{Level: LevelWarn, Check: "lane", Msg: fmt.Sprintf("lane %s: lock file unreadable: %v", name, err)})
	}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	all, err := tmuxadapter.New(layout.Socket()).ListSessions(cctx)
	// The dashboard session is meant to outlive its launch, and the
	// launcher session (submitted runs) its watcher: each keeps its last
	// pane for inspection.
	var ss []tmuxadapter.Session
	for _, s := range all {
		if s.Name != lanes.DashboardSession && s.Name != lanes.LauncherSession {
			ss = append(ss, s)
		}
	}
	if err == nil && len(ss) > 0 && !live {
		fs = append(fs, Finding{Level: LevelWarn, Check: "lane", Msg: fmt.Sprintf("lane %s: %d tmux session(s) on socket %s with no launcher (inspect with `tmux -L %s ls`, clear with `wave-orchestrator stop`)",
			name, len(ss), layout.Socket(), layout.Socket()), Fix: "wave-orchestrator stop"})
	}
	return fs
}
