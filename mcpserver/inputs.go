package mcpserver

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The tools' inputs. Field descriptions are what the model reads; each
// names the CLI flag it becomes, so an error the CLI words about a flag
// points at the field. Optional numbers are pointers: wave 0 is a wave.

type statusIn struct {
	Lane string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	Wave *int   `json:"wave,omitempty" jsonschema:"only this wave (--wave); default: every wave of the lane"`
}

type questionsIn struct {
	Lane string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	All  bool   `json:"all,omitempty" jsonschema:"also list answered questions; default: only those still waiting for a person (--pending)"`
}

type backlogStatusIn struct {
	Lane string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	Run  string `json:"run,omitempty" jsonschema:"backlog run id (--run); default: the lane's newest backlog run"`
}

type backlogPlanIn struct {
	Lane      string   `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	Issues    []int    `json:"issues,omitempty" jsonschema:"exactly these issue numbers, in this order (--issues); give issues or unbounded"`
	Unbounded bool     `json:"unbounded,omitempty" jsonschema:"take the next eligible issues of the backlog (--unbounded); give issues or unbounded"`
	Width     *int     `json:"width,omitempty" jsonschema:"workers at once (--width, config backlog.width); default: min(5, groups)"`
	Labels    []string `json:"labels,omitempty" jsonschema:"only issues carrying every one of these labels (--label)"`
}

type usageIn struct {
	Lane  string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	By    string `json:"by,omitempty" jsonschema:"group rows by agent (default), wave, issue, executor or model (--by)"`
	Wave  *int   `json:"wave,omitempty" jsonschema:"only this wave's runs (--wave)"`
	Since string `json:"since,omitempty" jsonschema:"only runs started since, e.g. 7d or 36h (--since)"`
}

type runStateIn struct {
	Lane  string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	RunID string `json:"runId" jsonschema:"the run id submit returned (--run-id)"`
}

type tailIn struct {
	Lane  string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	Wave  *int   `json:"wave,omitempty" jsonschema:"with agent: the wave of the agent whose output to read"`
	Agent string `json:"agent,omitempty" jsonschema:"with wave: the agent id (A1, A0, …) whose latest run's output to read"`
	Issue *int   `json:"issue,omitempty" jsonschema:"instead of wave and agent: the issue number whose backlog worker's output to read"`
	Run   string `json:"run,omitempty" jsonschema:"with issue: the backlog run id; default: the newest backlog run"`
	Lines *int   `json:"lines,omitempty" jsonschema:"how many of the last lines to return; default 80, at most 500"`
}

type waitIn struct {
	Lane           string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	RunID          string `json:"runId,omitempty" jsonschema:"wait for this submitted run to end; without it, wait for the lane's next change"`
	Wave           *int   `json:"wave,omitempty" jsonschema:"without runId: return only this wave's status"`
	TimeoutSeconds *int   `json:"timeoutSeconds,omitempty" jsonschema:"return after at most this many seconds even if nothing happened; default 60, at most 600"`
}

type submitIn struct {
	Lane string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	Kind string `json:"kind" jsonschema:"launch: run waves; resume: pick wave N up again; backlog: a backlog run (issues, or unbounded, or neither to resume the open one)"`
	// launch
	StartWave *int `json:"startWave,omitempty" jsonschema:"launch: first wave to run (--start-wave); default 0"`
	EndWave   *int `json:"endWave,omitempty" jsonschema:"launch: last wave to run (--end-wave); default: the last wave"`
	AutoNext  bool `json:"autoNext,omitempty" jsonschema:"launch: start at the first wave not yet completed (--auto-next)"`
	// resume
	Wave        *int     `json:"wave,omitempty" jsonschema:"resume: the wave to resume (--wave); required for kind resume"`
	Phase       string   `json:"phase,omitempty" jsonschema:"resume: the phase to re-run with every later closure stage (--phase): design, implementation, cont-eval, security-review, integrating, docs-closure or cont-qa-closure"`
	Agents      []string `json:"agents,omitempty" jsonschema:"resume: re-run these agents even if proven (--agent)"`
	RerunProven bool     `json:"rerunProven,omitempty" jsonschema:"resume: reuse no proven agent (--rerun-proven)"`
	// launch and resume
	Executor          string `json:"executor,omitempty" jsonschema:"launch, resume: executor of agents that name none; backlog: the workers' executor (--executor)"`
	TimeoutMinutes    *int   `json:"timeoutMinutes,omitempty" jsonschema:"launch, resume: per-agent deadline in minutes (--timeout-minutes)"`
	MaxRetriesPerWave *int   `json:"maxRetriesPerWave,omitempty" jsonschema:"launch, resume: retries after the first attempt (--max-retries-per-wave); default 1"`
	// backlog
	Issues     []int    `json:"issues,omitempty" jsonschema:"backlog: exactly these issue numbers, in this order (--issues)"`
	Unbounded  bool     `json:"unbounded,omitempty" jsonschema:"backlog: take the next eligible issues until drained or capped (--unbounded)"`
	Width      *int     `json:"width,omitempty" jsonschema:"backlog: workers at once (--width)"`
	Labels     []string `json:"labels,omitempty" jsonschema:"backlog: only issues with every one of these labels (--label)"`
	MaxIssues  *int     `json:"maxIssues,omitempty" jsonschema:"backlog, unbounded: stop taking new issues after this many (--max-issues)"`
	MaxMinutes *int     `json:"maxMinutes,omitempty" jsonschema:"backlog, unbounded: stop taking new issues after this many minutes (--max-minutes)"`
	Base       string   `json:"base,omitempty" jsonschema:"backlog: the branch the wave is cut from and the final pull request targets (--base)"`
	// all
	NoDashboard bool `json:"noDashboard,omitempty" jsonschema:"do not start the dashboard tmux session (--no-dashboard)"`
	NoQueue     bool `json:"noQueue,omitempty" jsonschema:"refuse instead of queueing when a run is active on the lane (--no-queue)"`
}

type answerIn struct {
	Lane     string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	ID       string `json:"id" jsonschema:"the question's id from the questions tool: q-… for a wave agent's, issue-N-… (or #N) for backlog issue N's"`
	Text     string `json:"text" jsonschema:"the answer, in the person's words"`
	Operator string `json:"operator,omitempty" jsonschema:"who answers: the person's name (--operator); default: the account the server runs as"`
	Force    bool   `json:"force,omitempty" jsonschema:"answer a question that is already answered (--force); only when the person asks to change their answer"`
}

type stopIn struct {
	Lane   string `json:"lane,omitempty" jsonschema:"lane name (--lane); default: the lane the server was started for"`
	What   string `json:"what" jsonschema:"lane: stop every run of the lane (waves and queued submitted runs); agent: only one agent's run, which a live launcher retries; backlog: pause the backlog run (workers stopped, worktrees and claims kept)"`
	Agent  string `json:"agent,omitempty" jsonschema:"with what=agent: the agent id (--agent)"`
	Run    string `json:"run,omitempty" jsonschema:"with what=backlog: the backlog run id (--run); default: the open one"`
	Finish bool   `json:"finish,omitempty" jsonschema:"with what=backlog: end the run now instead of pausing it: ready work merged, the rest parked, final pull request opened (--finish)"`
}

// Enumerations and bounds the schemas state (schemas.go) and the
// builders check.
var (
	usageBy    = []string{"agent", "wave", "issue", "executor", "model"}
	submitKind = []string{"launch", "resume", "backlog"}
	stopWhat   = []string{"lane", "agent", "backlog"}
)

const (
	defaultTailLines = 80
	maxTailLines     = 500
	defaultWaitS     = 60
	maxWaitS         = 600
)

// withLane puts --lane first when the call names a lane.
func withLane(lane string, args ...string) []string {
	if lane == "" {
		return args
	}
	return append([]string{"--lane=" + lane}, args...)
}

func waveArg(flag string, n *int) []string {
	if n == nil {
		return nil
	}
	return []string{"--" + flag + "=" + strconv.Itoa(*n)}
}

func boolArg(flag string, on bool) []string {
	if !on {
		return nil
	}
	return []string{"--" + flag}
}

func strArg(flag, v string) []string {
	if v == "" {
		return nil
	}
	return []string{"--" + flag + "=" + v}
}

func issuesArg(ns []int) []string {
	if len(ns) == 0 {
		return nil
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return []string{"--issues=" + strings.Join(parts, ",")}
}

func labelArgs(ls []string) []string {
	var out []string
	for _, l := range ls {
		out = append(out, "--label="+l)
	}
	return out
}

func (in statusIn) args() []string {
	return withLane(in.Lane, append([]string{"status", "--json"}, waveArg("wave", in.Wave)...)...)
}

func (in questionsIn) args() []string {
	return withLane(in.Lane, append([]string{"questions", "--json"}, boolArg("pending", !in.All)...)...)
}

func (in backlogStatusIn) args() []string {
	return withLane(in.Lane, append([]string{"backlog", "status", "--json"}, strArg("run", in.Run)...)...)
}

func (in backlogPlanIn) args() []string {
	a := []string{"backlog", "plan", "--json"}
	a = append(a, issuesArg(in.Issues)...)
	a = append(a, boolArg("unbounded", in.Unbounded)...)
	a = append(a, waveArg("width", in.Width)...)
	a = append(a, labelArgs(in.Labels)...)
	return withLane(in.Lane, a...)
}

func (in usageIn) args() ([]string, error) {
	if in.By != "" && !slices.Contains(usageBy, in.By) {
		return nil, fmt.Errorf("by %q: give one of %s", in.By, strings.Join(usageBy, ", "))
	}
	a := []string{"usage", "--json"}
	a = append(a, strArg("by", in.By)...)
	a = append(a, waveArg("wave", in.Wave)...)
	a = append(a, strArg("since", in.Since)...)
	return withLane(in.Lane, a...), nil
}

func (in runStateIn) args() ([]string, error) {
	if in.RunID == "" {
		return nil, errors.New("runId is required: the run id submit returned (the submitted runs are under status's lane, or ask the person)")
	}
	return withLane(in.Lane, "status", "--run-id="+in.RunID, "--json"), nil
}

// timeout is the wait's bound in seconds: the default when unset, an
// error outside 1..maxWaitS.
func (in waitIn) timeout() (int, error) {
	if in.TimeoutSeconds == nil {
		return defaultWaitS, nil
	}
	if s := *in.TimeoutSeconds; s < 1 || s > maxWaitS {
		return 0, fmt.Errorf("timeoutSeconds %d: give 1 to %d (call wait again to wait longer)", s, maxWaitS)
	}
	return *in.TimeoutSeconds, nil
}

func (in waitIn) args() ([]string, error) {
	s, err := in.timeout()
	if err != nil {
		return nil, err
	}
	t := "--timeout-seconds=" + strconv.Itoa(s)
	if in.RunID != "" {
		if in.Wave != nil {
			return nil, errors.New("give runId or wave, not both: runId waits for a submitted run, wave narrows the lane's status while waiting for a change")
		}
		return withLane(in.Lane, "wait", "--run-id="+in.RunID, t, "--json"), nil
	}
	return withLane(in.Lane, append([]string{"status", "--wait-change", t, "--exit-code", "--json"}, waveArg("wave", in.Wave)...)...), nil
}

// lines is how many lines of a tail to return.
func (in tailIn) lines() (int, error) {
	if in.Lines == nil {
		return defaultTailLines, nil
	}
	if n := *in.Lines; n < 1 || n > maxTailLines {
		return 0, fmt.Errorf("lines %d: give 1 to %d", n, maxTailLines)
	}
	return *in.Lines, nil
}

func (in tailIn) query() (TailQuery, error) {
	switch {
	case in.Issue != nil && (in.Wave != nil || in.Agent != ""):
		return TailQuery{}, errors.New("give issue (a backlog worker) or wave and agent (a wave agent), not both")
	case in.Issue != nil:
		return TailQuery{Lane: in.Lane, Issue: in.Issue, Run: in.Run}, nil
	case in.Wave == nil || in.Agent == "":
		return TailQuery{}, errors.New("say whose output: wave and agent (e.g. wave 0, agent A1), or issue for a backlog worker; the status and backlog_status tools list them")
	case in.Run != "":
		return TailQuery{}, errors.New("run names a backlog run: give it with issue, not with wave and agent")
	}
	return TailQuery{Lane: in.Lane, Wave: in.Wave, Agent: in.Agent}, nil
}

// args is the submit command line of a launch or resume; a backlog run
// has backlogArgs instead.
func (in submitIn) args() ([]string, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	a := []string{"submit", "--json"}
	if in.Kind == "resume" {
		a = append(a, waveArg("wave", in.Wave)...)
		a = append(a, strArg("phase", in.Phase)...)
		for _, ag := range in.Agents {
			a = append(a, "--agent="+ag)
		}
		a = append(a, boolArg("rerun-proven", in.RerunProven)...)
	} else {
		a = append(a, waveArg("start-wave", in.StartWave)...)
		a = append(a, waveArg("end-wave", in.EndWave)...)
		a = append(a, boolArg("auto-next", in.AutoNext)...)
	}
	a = append(a, strArg("executor", in.Executor)...)
	a = append(a, waveArg("timeout-minutes", in.TimeoutMinutes)...)
	a = append(a, waveArg("max-retries-per-wave", in.MaxRetriesPerWave)...)
	a = append(a, boolArg("no-dashboard", in.NoDashboard)...)
	a = append(a, boolArg("no-queue", in.NoQueue)...)
	return withLane(in.Lane, a...), nil
}

// backlogArgs are the `backlog run` flags of a backlog submission.
func (in submitIn) backlogArgs() ([]string, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	var a []string
	a = append(a, issuesArg(in.Issues)...)
	a = append(a, boolArg("unbounded", in.Unbounded)...)
	a = append(a, waveArg("width", in.Width)...)
	a = append(a, labelArgs(in.Labels)...)
	a = append(a, waveArg("max-issues", in.MaxIssues)...)
	a = append(a, waveArg("max-minutes", in.MaxMinutes)...)
	a = append(a, strArg("base", in.Base)...)
	a = append(a, strArg("executor", in.Executor)...)
	a = append(a, boolArg("no-dashboard", in.NoDashboard)...)
	return a, nil
}

// check refuses fields of another kind, so a misplaced field is said
// rather than ignored.
func (in submitIn) check() error {
	if !slices.Contains(submitKind, in.Kind) {
		return fmt.Errorf("kind %q: give launch, resume or backlog", in.Kind)
	}
	set := map[string]bool{
		"startWave": in.StartWave != nil, "endWave": in.EndWave != nil, "autoNext": in.AutoNext,
		"wave": in.Wave != nil, "phase": in.Phase != "", "agents": len(in.Agents) > 0, "rerunProven": in.RerunProven,
		"timeoutMinutes": in.TimeoutMinutes != nil, "maxRetriesPerWave": in.MaxRetriesPerWave != nil,
		"issues": len(in.Issues) > 0, "unbounded": in.Unbounded, "width": in.Width != nil, "labels": len(in.Labels) > 0,
		"maxIssues": in.MaxIssues != nil, "maxMinutes": in.MaxMinutes != nil, "base": in.Base != "",
	}
	own := map[string][]string{
		"launch":  {"startWave", "endWave", "autoNext", "timeoutMinutes", "maxRetriesPerWave"},
		"resume":  {"wave", "phase", "agents", "rerunProven", "timeoutMinutes", "maxRetriesPerWave"},
		"backlog": {"issues", "unbounded", "width", "labels", "maxIssues", "maxMinutes", "base"},
	}[in.Kind]
	var wrong []string
	for name, on := range set {
		if on && !slices.Contains(own, name) {
			wrong = append(wrong, name)
		}
	}
	if len(wrong) > 0 {
		slices.Sort(wrong)
		return fmt.Errorf("kind %s takes no %s: these fields belong to another kind (launch: startWave, endWave, autoNext; resume: wave, phase, agents, rerunProven; backlog: issues, unbounded, width, labels, maxIssues, maxMinutes, base)",
			in.Kind, strings.Join(wrong, ", "))
	}
	if in.Kind == "resume" && in.Wave == nil {
		return errors.New("kind resume needs wave: the wave to pick up again")
	}
	return nil
}

func (in answerIn) args() ([]string, error) {
	switch {
	case strings.TrimSpace(in.ID) == "":
		return nil, errors.New("id is required: the question's id from the questions tool (q-… or #N)")
	case strings.TrimSpace(in.Text) == "":
		return nil, errors.New("text is required: the person's answer; ask them if you do not have it")
	}
	a := []string{"answer"}
	a = append(a, strArg("operator", in.Operator)...)
	a = append(a, boolArg("force", in.Force)...)
	// After "--" the id and text are never read as flags, whatever they
	// start with.
	a = append(a, "--", in.ID, in.Text)
	return withLane(in.Lane, a...), nil
}

func (in stopIn) args() ([]string, error) {
	switch in.What {
	case "lane":
		if in.Agent != "" || in.Run != "" || in.Finish {
			return nil, errors.New("what=lane takes no agent, run or finish: use what=agent or what=backlog")
		}
		return withLane(in.Lane, "stop"), nil
	case "agent":
		if in.Agent == "" {
			return nil, errors.New("what=agent needs agent: the agent id whose run to stop")
		}
		if in.Run != "" || in.Finish {
			return nil, errors.New("run and finish belong to what=backlog")
		}
		return withLane(in.Lane, "stop", "--agent="+in.Agent), nil
	case "backlog":
		if in.Agent != "" {
			return nil, errors.New("agent belongs to what=agent")
		}
		a := append([]string{"backlog", "stop"}, strArg("run", in.Run)...)
		return withLane(in.Lane, append(a, boolArg("finish", in.Finish)...)...), nil
	}
	return nil, fmt.Errorf("what %q: give lane, agent or backlog", in.What)
}
