package runtime

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/internal/fanout"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

// Backend starts, observes and terminates runs: TmuxBackend here, and
// the kubernetes backend in package kube.
type Backend interface {
	Start(ctx context.Context, payloads []*Payload) error
	Terminate(ctx context.Context, runDir string, grace time.Duration, keepSession bool) error
	Observe(ctx context.Context, runDir string, now time.Time) (Observation, error)
}

// TmuxBackend runs each agent in its own session on one tmux server.
type TmuxBackend struct {
	tm          *tmuxadapter.Client
	self        string
	logger      *slog.Logger
	launchGrace time.Duration
	launches    launchCache
}

// BackendOption configures a TmuxBackend.
type BackendOption func(*TmuxBackend)

// WithLaunchGrace sets how long a run recorded as launching may lack its
// tmux session before Observe calls it lost (default DefaultLaunchGrace).
// Raise it when a loaded host is slow to start sessions.
func WithLaunchGrace(d time.Duration) BackendOption {
	return func(b *TmuxBackend) {
		if d > 0 {
			b.launchGrace = d
		}
	}
}

var _ Backend = (*TmuxBackend)(nil)

// NewTmuxBackend returns a backend whose sessions run `self agent-run`;
// self is the path of the wave-orchestrator binary.
func NewTmuxBackend(tm *tmuxadapter.Client, self string, logger *slog.Logger, opts ...BackendOption) *TmuxBackend {
	if logger == nil {
		logger = slog.Default()
	}
	b := &TmuxBackend{tm: tm, self: self, logger: logger, launchGrace: DefaultLaunchGrace}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Tmux returns the backend's tmux client.
func (b *TmuxBackend) Tmux() *tmuxadapter.Client { return b.tm }

// Start writes each run's launch.json (secrets redacted), its env file (this
// process's environment and the secrets, see launchEnv) and a `launching`
// runtime.json, then creates every
// session in one tmux invocation, tagged @wave_run/@wave_lane/@wave_agent.
func (b *TmuxBackend) Start(ctx context.Context, payloads []*Payload) error {
	specs := make([]tmuxadapter.SessionSpec, 0, len(payloads))
	now := time.Now()
	for _, p := range payloads {
		if err := validatePayload(p); err != nil {
			return err
		}
		p.FillPaths()
		if p.SchemaVersion == 0 {
			p.SchemaVersion = SchemaVersion
		}
		if p.SocketName == "" {
			p.SocketName = b.tm.Socket()
		}
	}
	if err := writeRunFiles(payloads, now); err != nil {
		return err
	}
	for _, p := range payloads {
		launch := filepath.Join(p.RunDir, launchFile)
		specs = append(specs, tmuxadapter.SessionSpec{
			Name: p.SessionName,
			// Several words: tmux executes them without a shell, so the
			// server's default-shell is never involved.
			Argv: []string{b.self, "agent-run", "--payload", launch},
			Cwd:  p.Cwd,
			// The window names the agent, not the runner binary.
			Window: p.AgentID,
			Options: map[string]string{
				"@wave_run": p.RunID, "@wave_lane": p.Lane, "@wave_agent": p.AgentID,
			},
		})
	}
	if err := b.tm.NewSessions(ctx, specs); err != nil {
		return b.startFailed(ctx, payloads, err)
	}
	return nil
}

// fileWriters bounds the runs whose files Start writes at once.
const fileWriters = 8

// writeRunFiles writes each run's launch.json, env file and launching
// record, several runs at a time: each durable write waits on its fsyncs,
// and a wave's 20 runs one after another kept tmux from starting the
// first session for tens of milliseconds. The first failure in payload
// order is returned; no session is created then.
func writeRunFiles(payloads []*Payload, now time.Time) error {
	environ := os.Environ()
	errs := make([]error, len(payloads))
	fanout.Each(len(payloads), fileWriters, func(i int) { errs[i] = writeRun(payloads[i], environ, now) })
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("run %s: %w", payloads[i].RunID, err)
		}
	}
	return nil
}

func writeRun(p *Payload, environ []string, now time.Time) error {
	if err := jsonfile.MkdirAll(p.RunDir); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(p.RunDir, launchFile), Redacted(*p)); err != nil {
		return err
	}
	if err := writeEnvFile(p, environ); err != nil {
		return err
	}
	return WriteJSON(p.RuntimePath, launchingRecord(p, now))
}

// StartError is a Start that failed. NotStarted are the run directories
// whose session never came up: their records are closed as failed, so
// nothing waits for them. The other runs of the batch did start.
type StartError struct {
	Runs       int
	NotStarted []string
	Err        error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("%d of %d run(s) did not start: %v", len(e.NotStarted), e.Runs, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// startFailed finds which sessions of a failed batch exist (a batch stops
// at its first failing command), closes the records of runs that never
// got one and removes their env files: secrets stay at rest no longer
// than needed. When tmux cannot say, the records stay `launching` and
// liveness calls them lost once the launch grace has passed.
func (b *TmuxBackend) startFailed(ctx context.Context, payloads []*Payload, startErr error) error {
	for _, p := range payloads {
		os.Remove(filepath.Join(p.RunDir, envFile))
	}
	se := &StartError{Runs: len(payloads), Err: startErr}
	ss, err := b.tm.ListSessions(context.WithoutCancel(ctx))
	if err != nil && !tmuxadapter.IsGone(err) && !errors.Is(err, tmuxadapter.ErrBinaryMissing) {
		return se
	}
	started := map[string]bool{}
	for _, s := range ss {
		started[s.Run] = true
	}
	now := time.Now()
	for _, p := range payloads {
		if started[p.RunID] {
			continue
		}
		se.NotStarted = append(se.NotStarted, p.RunDir)
		rec := launchingRecord(p, now)
		rec.TerminalDisposition = Failed
		rec.ExitReason = "session did not start: " + startErr.Error()
		rec.FinishedAt = &now
		if werr := WriteJSON(p.RuntimePath, rec); werr != nil {
			b.logger.Error("close unstarted run", "run", p.RunID, "err", werr)
		}
	}
	return se
}

// CheckPayload reports a payload no backend can start.
func CheckPayload(p *Payload) error {
	switch {
	case p.RunID == "":
		return errors.New("payload: empty runId")
	case p.RunDir == "":
		return fmt.Errorf("run %s: empty runDir", p.RunID)
	case len(p.Argv) == 0:
		return fmt.Errorf("run %s (agent %s): empty argv", p.RunID, p.AgentID)
	}
	return nil
}

func validatePayload(p *Payload) error {
	if err := CheckPayload(p); err != nil {
		return err
	}
	if err := tmuxadapter.ValidateName(p.SessionName); err != nil {
		return fmt.Errorf("run %s (agent %s): %w", p.RunID, p.AgentID, err)
	}
	return nil
}

func launchingRecord(p *Payload, now time.Time) Record {
	rec := Record{
		SchemaVersion: SchemaVersion, RunID: p.RunID, Lane: p.Lane, WaveNumber: p.WaveNumber,
		Attempt: p.Attempt, AgentID: p.AgentID, ExecutorID: p.ExecutorID, SessionBackend: BackendTmux,
		SocketName: p.SocketName, SessionName: p.SessionName, StartedAt: now, LastHeartbeatAt: now,
		HeartbeatIntervalMs: p.HeartbeatIntervalMs, TerminalDisposition: Launching,
		LogPath: p.LogPath, StatusPath: p.StatusPath, PromptHash: p.PromptHash,
	}
	if k := p.Kubernetes; k != nil {
		rec.SessionBackend = BackendKubernetes
		rec.Kubernetes = &KubeRef{Namespace: k.Namespace, Job: k.Name}
	}
	return rec
}

// Observe classifies the run in runDir.
func (b *TmuxBackend) Observe(ctx context.Context, runDir string, now time.Time) (Observation, error) {
	obs := observeRun(ctx, paneFacts(b.tm), b.launches.read, runDir, now, b.launchGrace)
	return obs, obs.Err
}

// Terminate stops the run in runDir (see Terminate) and then kills its
// session unless keepSession. A run whose runtime.json is unreadable is
// stopped through its pane: the pane's process is its runner.
func (b *TmuxBackend) Terminate(ctx context.Context, runDir string, grace time.Duration, keepSession bool) error {
	rec, err := ReadRecord(filepath.Join(runDir, runtimeFile))
	if errors.Is(err, ErrUnreadable) {
		rec, err = b.paneRecord(ctx, runDir)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("terminate %s: %w", runDir, err)
	}
	if rec.RunnerPid == 0 {
		// Still launching: the runner (the pane's process) may be starting
		// this instant and has recorded nothing yet. Killing only the
		// session would leave it running, since agents outlive their
		// session: signal the pane's process as the runner.
		if pr, err := b.paneRecord(ctx, runDir); err == nil && pr.RunnerPid != 0 {
			rec.RunnerPid, rec.RunnerStartTime = pr.RunnerPid, pr.RunnerStartTime
		}
	}
	if rec.RunnerPid != 0 {
		if err := Terminate(ctx, *rec, grace); err != nil {
			return fmt.Errorf("terminate %s: %w", rec.RunID, err)
		}
	}
	if keepSession || rec.SessionName == "" {
		return nil
	}
	return b.killRunSession(ctx, rec.SessionName, rec.RunID)
}

// paneRecord stands in for an unreadable record: the run's session (from
// launch.json) and, while its pane lives, the pane's process as runner.
// The runner forwards the TERM to its agent and escalates to KILL itself.
func (b *TmuxBackend) paneRecord(ctx context.Context, runDir string) (*Record, error) {
	lf, err := readLaunchFile(runDir)
	if err != nil {
		return nil, err
	}
	rec := &Record{RunID: lf.RunID, SessionName: lf.SessionName}
	if lf.SessionName == "" {
		return rec, nil
	}
	p, err := b.tm.PaneInfo(ctx, lf.SessionName)
	if err != nil || p.Dead || p.Pid <= 0 {
		return rec, nil
	}
	if start, _, err := ProcStartTime(p.Pid); err == nil {
		rec.RunnerPid, rec.RunnerStartTime = p.Pid, start
	}
	return rec, nil
}

// killRunSession kills session name while it is still run runID's: the
// agent's next attempt reuses the name, and the launcher may start it as
// soon as this run's record is terminal, even between the listing and the
// kill (hence the kill of the session listed, not of the name).
func (b *TmuxBackend) killRunSession(ctx context.Context, name, runID string) error {
	ss, err := b.tm.ListSessions(ctx)
	if err != nil {
		if tmuxadapter.IsGone(err) {
			return nil
		}
		return fmt.Errorf("terminate %s: %w", runID, err)
	}
	for _, s := range ss {
		if s.Name != name || s.Run != "" && s.Run != runID {
			continue
		}
		// By id: the launcher may have put the next attempt's session
		// under this name since the listing, and that one must live.
		if err := b.tm.KillListed(ctx, s); err != nil && !tmuxadapter.IsGone(err) {
			return fmt.Errorf("terminate %s: %w", runID, err)
		}
	}
	return nil
}
