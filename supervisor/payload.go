package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/questions"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/runs"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// WorkerRolePrompt is the scaffolded worker role prompt's default path.
const WorkerRolePrompt = "docs/agents/wave-backlog-worker-role.md"

// SessionPrefix starts every worker's tmux session name.
const SessionPrefix = "backlog-i"

// SessionName is the tmux session of issue n's worker.
func SessionName(n int) string { return SessionPrefix + strconv.Itoa(n) }

// WorkerAgent is the agent a worker runs as: its executor comes from
// backlog.executor (the `### Executor` keys) or --executor, resolved like
// any implementation agent's.
func WorkerAgent(cfg map[string]string, n int, title string) (*wave.Agent, error) {
	ec, errs := wave.ParseExecutorMap(cfg)
	if len(errs) > 0 {
		for i, e := range errs {
			errs[i] = fmt.Errorf("backlog.executor.%w", e)
		}
		return nil, errors.Join(errs...)
	}
	return &wave.Agent{ID: "i" + strconv.Itoa(n), Title: oneLine(title), Executor: ec}, nil
}

// workerExecutor is backlog.executor with --executor, when given, as its
// id: the flag names what the user wants to run now.
func (s *Supervisor) workerConfig() map[string]string {
	cfg := map[string]string{}
	for k, v := range s.o.Config.Backlog.Executor {
		cfg[k] = v
	}
	if s.o.Executor != "" {
		cfg["id"] = s.o.Executor
	}
	return cfg
}

// checkExecutors resolves the worker's (and reviewer's) executor once, so
// a bad key or an unknown id is reported before any claim or push.
func (s *Supervisor) checkExecutors() error {
	if len(s.o.Config.Backlog.Review.Executor) > 0 && s.o.Lane.Runtime.UsesKubernetes() {
		// A reviewer runs in a scratch directory on this machine; as a pod
		// it would have neither that directory nor a checkout.
		return fmt.Errorf("%s: backlog.review: reviewers do not run on a kubernetes lane yet (lane %s); "+
			"remove backlog.review.executor, or review on a tmux lane", s.o.Config.KeyLine("backlog.review"), s.o.Lane.Name)
	}
	for _, c := range []struct {
		key string
		cfg map[string]string
	}{{"backlog.executor", s.workerConfig()}, {"backlog.review.executor", s.o.Config.Backlog.Review.Executor}} {
		if c.key == "backlog.review.executor" && len(c.cfg) == 0 {
			continue
		}
		var err error
		if c.key == "backlog.executor" {
			s.worker0, err = ResolveWorker(s.o.Config, s.o.Lane, s.o.Executor)
		} else {
			var agent *wave.Agent
			if agent, err = WorkerAgent(c.cfg, 0, "check"); err == nil {
				_, err = executor.Resolve(agent, roles.RoleImplementation, s.o.Lane, "", false)
			}
			if err != nil {
				err = fmt.Errorf("%s: %s: %w", s.o.Config.KeyLine(c.key), c.key, err)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ResolveWorker resolves the executor every worker of a run uses:
// backlog.executor, its id replaced by --executor (cli) when given — a
// wave agent's own id beats --executor, but backlog.executor is the
// default the flag is documented to override. `backlog run` preflights
// what this returns before it claims anything.
func ResolveWorker(cfg *config.Config, lane *config.Lane, cli string) (executor.Resolved, error) {
	agent, err := WorkerAgent(cfg.Backlog.Executor, 0, "")
	if err != nil {
		return executor.Resolved{}, fmt.Errorf("%s: %w", cfg.KeyLine("backlog.executor"), err)
	}
	agent.ID = "backlog worker" // names the workers in resolution errors
	if cli = strings.TrimSpace(cli); cli != "" && agent.Executor != nil {
		agent.Executor.ID = &cli
	}
	res, err := executor.Resolve(agent, roles.RoleImplementation, lane, cli, false)
	if err != nil {
		return executor.Resolved{}, fmt.Errorf("backlog worker executor: %w", err)
	}
	return res, nil
}

func (s *Supervisor) runDir(n, attempt int) string {
	return filepath.Join(s.log.dir, "runs", fmt.Sprintf("i%d-a%d", n, attempt))
}

// payload writes the prompt of j's worker and returns its launch payload.
func (s *Supervisor) payload(ctx context.Context, j *job, attempt int, branch, wt string, why workerStart) (*runtime.Payload, error) {
	n := j.w.n
	issue, err := s.issue(ctx, j, n)
	if err != nil {
		return nil, err
	}
	agent, err := WorkerAgent(s.workerConfig(), n, issue.Title)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.o.Config.KeyLine("backlog.executor"), err)
	}
	res, err := ResolveWorker(s.o.Config, s.o.Lane, s.o.Executor)
	if err != nil {
		return nil, fmt.Errorf("#%d: %w", n, err)
	}
	res = onExecutor(res, why.executor, attempt)
	role, err := os.ReadFile(filepath.Join(s.o.Lane.RepoRoot, firstNonEmpty(s.o.Config.Backlog.WorkerRolePrompt, WorkerRolePrompt)))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("worker role prompt: %w", err)
	}
	var answer *backlog.Answer
	var answered questions.Question
	j.onLoop(func() {
		is := s.run().Issues[n]
		if answer = is.Answer; answer != nil {
			answered = questions.IssueAnswered(s.o.Layout, s.run().Info.ID, s.run().Info.StartedAt, is)
		}
	})
	prompt := backlog.WorkerPrompt(backlog.PromptInput{RolePrompt: string(role), Issue: issue, Branch: branch,
		WaveBranch: s.run().Info.WaveBranch, Worktree: wt, Attempt: attempt, Salvage: why.salvage,
		SalvageRef: why.salvageRef, Stopped: why.stopped, Conflict: why.conflict, Rework: why.rework, Answer: answer})
	p, err := s.runPayload(agentRun{what: fmt.Sprintf("#%d", n), agent: agent, res: res, dir: s.runDir(n, attempt), cwd: wt, prompt: prompt,
		attempt: attempt, session: SessionName(n), issue: n, branch: branch})
	if err != nil || answer == nil {
		return p, err
	}
	return p, tellAnswered(p, n, answered)
}

// tellAnswered gives a worker started after a person answered its issue's
// question what a wave agent gets (docs/local-agent.md): $WAVE_ANSWERED=1
// and, in $WAVE_ANSWERS_FILE, the answered question as `questions --json`
// prints it. A worker that is no model cannot read the answer in its
// prompt: every prompt's rules name the answers heading.
func tellAnswered(p *runtime.Payload, n int, q questions.Question) error {
	path := filepath.Join(p.RunDir, lanes.AnswersFile)
	if err := jsonfile.Write(path, []questions.Question{q}); err != nil {
		return fmt.Errorf("#%d: answers file: %w", n, err)
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	p.Env["WAVE_ANSWERED"] = "1"
	p.Env["WAVE_ANSWERS_FILE"] = path
	return nil
}

// agentRun is what a worker's run and a reviewer's run differ in.
type agentRun struct {
	what             string // names the run in errors: "#12", "review #12"
	agent            *wave.Agent
	res              executor.Resolved
	dir, cwd, prompt string
	session, branch  string
	attempt, issue   int
	review           bool
}

// runPayload writes r's prompt into its run dir and returns its launch
// payload. A worker's deadline is the lane timeout, shortened by its
// executor's budget, and it retries on rate limits; a reviewer's is
// backlog.verifyTimeoutMinutes, with no retries.
func (s *Supervisor) runPayload(r agentRun) (*runtime.Payload, error) {
	info := s.run().Info
	minutes := s.o.Lane.Runtime.TimeoutMinutes
	if r.review {
		minutes = s.o.Config.Backlog.VerifyTimeoutMin
	}
	p, _, err := runs.Payload(runs.Spec{What: r.what, Lane: s.o.Lane, Layout: s.o.Layout,
		RunID: filepath.Base(r.dir), RunDir: r.dir, Cwd: r.cwd, Session: r.session, Prompt: r.prompt,
		Build: executor.BuildInput{Agent: r.agent, Wave: &wave.Wave{}, Resolved: r.res, Attempt: r.attempt, Self: s.o.Self,
			Worker: &executor.WorkerInfo{Issue: r.issue, Branch: r.branch, Target: info.WaveBranch, Worktree: r.cwd,
				TokenEnv: s.o.Config.GitHub.TokenEnv, Review: r.review, RunID: info.ID}},
		OrchestratorID: "backlog-" + info.ID, Minutes: minutes, FixedMinutes: r.review, NoRateLimitRetry: r.review,
		Sandbox: s.runSandbox(!r.review)})
	return p, err
}

// issue returns issue n as last read, reading it when this process has
// not (a resumed run): a worker's prompt always carries the issue. In j,
// or on the loop with s.inline.
func (s *Supervisor) issue(ctx context.Context, j *job, n int) (backlog.Issue, error) {
	var is backlog.Issue
	var ok bool
	j.onLoop(func() { is, ok = s.issues[n] })
	if ok && is.Number == n {
		return is, nil
	}
	is, err := s.o.Source.Get(ctx, n)
	if err != nil {
		return backlog.Issue{}, fmt.Errorf("issue #%d: %w", n, err)
	}
	j.onLoop(func() { s.issues[n] = is })
	return is, nil
}
