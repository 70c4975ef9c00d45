// Package lanes owns a lane's footprint: where its state lives on disk, the
// names of its tmux socket and sessions, and the lane lock that keeps one
// launcher per lane.
package lanes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"

	"regexp"
)

// Layout is the on-disk and tmux naming of one lane (docs/state.md).
type Layout struct {
	RepoRoot string // absolute
	Project  string // sanitised project token
	Lane     string
	StateDir string // <repo>/<stateRoot>/lanes/<lane>
}

var (
	nonToken   = regexp.MustCompile(`[^a-z0-9_-]+`)
	nonSession = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
	laneRe     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
)

// ValidateLane checks a lane name the way the reference does.
func ValidateLane(lane string) error {
	if !laneRe.MatchString(lane) {
		return fmt.Errorf("lane %q: must match %s", lane, laneRe)
	}
	return nil
}

// Token lower-cases s and replaces runs of characters outside [a-z0-9_-]
// with '-', trimming dashes. Empty input gives "repo".
func Token(s string) string {
	t := strings.Trim(nonToken.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(t) > 24 {
		t = strings.Trim(t[:24], "-")
	}
	if t == "" {
		return "repo"
	}
	return t
}

// New returns the layout of lane in the repo at repoRoot (absolute) with
// state under stateRoot (repo-relative, e.g. ".wave"). project may be empty,
// in which case the repo directory's name is used.
func New(repoRoot, stateRoot, project, lane string) Layout {
	if project == "" {
		project = filepath.Base(repoRoot)
	}
	if stateRoot == "" {
		stateRoot = ".wave"
	}
	return Layout{
		RepoRoot: repoRoot,
		Project:  Token(project),
		Lane:     lane,
		StateDir: filepath.Join(repoRoot, stateRoot, "lanes", lane),
	}
}

// Socket is the lane's tmux socket name (tmux -L): deterministic from the
// project, lane and repo path; never derived from $TMUX.
func (l Layout) Socket() string {
	sum := sha256.Sum256([]byte(l.RepoRoot))
	return fmt.Sprintf("wave-%s-%s-%s", l.Project, l.Lane, hex.EncodeToString(sum[:])[:8])
}

// SessionName is the tmux session of agent in wave n.
func SessionName(n int, agent string) string {
	return SanitizeSession(fmt.Sprintf("w%d-%s", n, agent))
}

// DashboardSession is the dashboard's session name.
const DashboardSession = "dashboard"

// LauncherSession is the session a lane's submitted runs run in: their
// watcher, with each run's launcher writing to its pane (`tmux attach`
// shows the launcher's console). Like the dashboard's, it outlives its
// runs: its last pane stays for inspection.
const LauncherSession = "launcher"

// SanitizeSession maps s onto the characters tmux keeps in session names.
func SanitizeSession(s string) string {
	s = nonSession.ReplaceAllString(s, "_")
	if s == "" {
		return "_"
	}
	return s
}

// LockPath is the lane lock file.
func (l Layout) LockPath() string { return filepath.Join(l.StateDir, "lock") }

// EventsPath is the lane's append-only event log.
func (l Layout) EventsPath() string { return filepath.Join(l.StateDir, "events.jsonl") }

// LedgerPath is the completed-wave ledger used by --auto-next.
func (l Layout) LedgerPath() string { return filepath.Join(l.StateDir, "ledger.json") }

// SubmittedDir holds the lane's submitted runs: one record per run and
// the queue's locks.
func (l Layout) SubmittedDir() string { return filepath.Join(l.StateDir, "submitted") }

// ControlPath is the file `stop` writes to ask a live launcher to stop.
func (l Layout) ControlPath() string { return filepath.Join(l.StateDir, "control.json") }

// WaveDir is waves/<n>.
func (l Layout) WaveDir(n int) string {
	return filepath.Join(l.StateDir, "waves", fmt.Sprint(n))
}

// StatePath is waves/<n>/state.json.
func (l Layout) StatePath(n int) string { return filepath.Join(l.WaveDir(n), "state.json") }

// CoordinationPath is waves/<n>/coordination.jsonl.
func (l Layout) CoordinationPath(n int) string {
	return filepath.Join(l.WaveDir(n), "coordination.jsonl")
}

// RunsDir is waves/<n>/runs.
func (l Layout) RunsDir(n int) string { return filepath.Join(l.WaveDir(n), "runs") }

// RunID names the run of agent at attempt k in wave n.
func RunID(n int, agent string, attempt int) string {
	return fmt.Sprintf("w%d-%s-a%d", n, agent, attempt)
}

// RunDir is waves/<n>/runs/<AGENT>-a<k>/. A retry is a new directory.
func (l Layout) RunDir(n int, agent string, attempt int) string {
	return filepath.Join(l.RunsDir(n), fmt.Sprintf("%s-a%d", SanitizeSession(agent), attempt))
}

// DryRun returns the layout used by `launch --dry-run`: the same tree under
// <state>/dry-run so previews never mix with live runs.
func (l Layout) DryRun() Layout {
	d := l
	d.StateDir = filepath.Join(l.StateDir, "dry-run")
	return d
}

// Files inside a run directory.
const (
	PromptFile  = "prompt.md"
	LaunchFile  = "launch.json"
	RuntimeFile = "runtime.json"
	StatusFile  = "status.json"
	LogFile     = "agent.log"
	SummaryFile = "summary.json"
	// AnswersFile holds what people answered the agent's questions, for
	// a run started with answers ($WAVE_ANSWERS_FILE names it).
	AnswersFile = "answers.json"
)
