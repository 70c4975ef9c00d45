package config

import (
	"strconv"
	"strings"
	"time"
)

// Source kinds of backlog.source.
const (
	SourceGitHub = "github"
	SourceLocal  = "local"
)

func (c *Config) validateBacklog(p *problems) {
	b := &c.Backlog
	b.Source = strings.ToLower(strings.TrimSpace(b.Source))
	if b.Source != "" {
		p.oneOf("backlog.source", b.Source, SourceGitHub, SourceLocal)
	}
	if b.Source == SourceGitHub && (c.GitHub.Owner == "" || c.GitHub.Repo == "") {
		p.add("backlog.source", "github needs github.owner and github.repo")
	}
	p.atLeast("backlog.width", b.Width, 0)
	p.atLeast("backlog.maxIssues", b.MaxIssues, 0)
	p.atLeast("backlog.maxMinutes", b.MaxMinutes, 0)
	p.atLeast("backlog.silenceMinutes", b.SilenceMinutes, 0)
	p.atLeast("backlog.silenceSeconds", b.SilenceSeconds, 0)
	p.atLeast("backlog.noProgressMinutes", b.NoProgressMinutes, 0)
	p.atLeast("backlog.noProgressSeconds", b.NoProgressSeconds, 0)
	p.atLeast("backlog.maxRunsPerIssue", b.MaxRunsPerIssue, 0)
	p.atLeast("backlog.transientRetryMinutes", b.TransientRetryMinutes, 0)
	p.atLeast("backlog.transientRetrySeconds", b.TransientRetrySeconds, 0)
	p.atLeast("backlog.verifyTimeoutMinutes", b.VerifyTimeoutMin, 1)
	p.atLeast("backlog.verifyParallel", b.VerifyParallel, 0)
	p.atLeast("backlog.checksTimeoutMinutes", b.ChecksTimeoutMinutes, 1)
	c.validateChecks(p)
	c.validateSetup(p)
	p.atLeast("backlog.snapshotMinutes", b.SnapshotMinutes, 0)
	p.atLeast("backlog.reworkRounds", b.ReworkRounds, 0)
	p.atLeast("backlog.inputWaitMinutes", b.InputWaitMinutes, -1)
	p.atLeast("backlog.probe.timeoutSeconds", b.Probe.TimeoutSeconds, 1)
	p.atLeast("backlog.claim.leaseMinutes", b.Claim.LeaseMinutes, 1)
	p.oneOf("backlog.undeclaredSurface", b.UndeclaredSurface, "serial", "parallel")
	p.oneOf("backlog.surfacePolicy", b.SurfacePolicy, "warn", "park")
	p.capOf("backlog.budget.perIssue", b.Budget.PerIssue)
	p.capOf("backlog.budget.run", b.Budget.Run)
	p.budgetPolicy("backlog.budget", b.Budget.BudgetPolicy)
	for _, k := range []struct {
		key string
		v   string
	}{{"backlog.claimLabel", b.ClaimLabel}, {"backlog.needsInputLabel", b.NeedsInputLabel}} {
		if strings.TrimSpace(k.v) == "" {
			p.add(k.key, "must not be empty")
		}
	}
	for _, argv := range []struct {
		key string
		v   []string
	}{{"backlog.verify", b.Verify}, {"backlog.setup", b.Setup}, {"backlog.probe.argv", b.Probe.Argv},
		{"backlog.claim.check", b.Claim.Check}, {"backlog.claim.command", b.Claim.Command}} {
		if len(argv.v) > 0 && strings.TrimSpace(argv.v[0]) == "" {
			p.add(argv.key, "the command (first element) is empty")
		}
	}
	if b.LocalDir != "" {
		p.repoPath("backlog.localDir", &b.LocalDir)
	}
}

// ChecksBranchProtection in backlog.checks stands for the required
// checks of the branch a pull request goes into.
const ChecksBranchProtection = "branch-protection"

// validateChecks: backlog.checks are names, each once, and need GitHub
// (the local source has no CI to ask).
func (c *Config) validateChecks(p *problems) {
	b := &c.Backlog
	seen := map[string]bool{}
	for i, name := range b.Checks {
		name = strings.TrimSpace(name)
		b.Checks[i] = name
		switch {
		case name == "":
			p.add("backlog.checks", "a check name is empty")
		case seen[name]:
			p.add("backlog.checks", "check %q is named twice", name)
		}
		seen[name] = true
	}
	if len(b.Checks) > 0 && c.SourceKind() != SourceGitHub {
		p.add("backlog.checks", "needs the github source (backlog.source: github): CI checks are read from GitHub")
	}
}

// SourceKind is the backlog source in effect: backlog.source, else github
// when github.owner is set, else local.
func (c *Config) SourceKind() string {
	switch {
	case c.Backlog.Source != "":
		return c.Backlog.Source
	case c.GitHub.Owner != "":
		return SourceGitHub
	}
	return SourceLocal
}

// Silence is how long a worker may produce no output and no worktree
// change before it is called stalled; 0 disables the timer.
func (b Backlog) Silence() time.Duration {
	if b.SilenceSeconds > 0 {
		return time.Duration(b.SilenceSeconds) * time.Second
	}
	return time.Duration(b.SilenceMinutes) * time.Minute
}

// NoProgress is how long a worker may go on with neither a new commit
// nor a changed file before it is stopped as no-progress; 0 disables.
func (b Backlog) NoProgress() time.Duration {
	if b.NoProgressSeconds > 0 {
		return time.Duration(b.NoProgressSeconds) * time.Second
	}
	return time.Duration(b.NoProgressMinutes) * time.Minute
}

// TransientRetry is how long a transient failure is waited out before
// the supervisor gives up on it.
func (b Backlog) TransientRetry() time.Duration {
	if b.TransientRetrySeconds > 0 {
		return time.Duration(b.TransientRetrySeconds) * time.Second
	}
	return time.Duration(b.TransientRetryMinutes) * time.Minute
}

// InputWait is how long a run with nothing left but questions waits for
// their answers: 0 not at all, negative until they are answered.
func (b Backlog) InputWait() time.Duration {
	if b.InputWaitMinutes < 0 {
		return -1
	}
	return time.Duration(b.InputWaitMinutes) * time.Minute
}

// WorkerPRsOn reports whether worker PRs are opened (default true).
func (b Backlog) WorkerPRsOn() bool { return b.WorkerPRs == nil || *b.WorkerPRs }

// KeyLine names where key's value came from, for errors found by other
// packages: "flag --x" or "env WAVE_X" when one set it (they beat the
// file), else "file:line" of the key in the loaded file, else the file
// ("" without one).
func (c *Config) KeyLine(key string) string {
	if f, ok := c.src.flag[key]; ok {
		return "flag " + f
	}
	if e, ok := c.src.env[key]; ok {
		return "env " + e
	}
	if l, ok := c.src.lines[key]; ok && c.src.file != "" {
		return c.src.file + ":" + strconv.Itoa(l)
	}
	return c.src.file
}
