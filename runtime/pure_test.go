package runtime

import (
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
)

func slogDiscard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestAgentEnv(t *testing.T) {
	t.Parallel()
	p := &Payload{Lane: "main", WaveNumber: 2, AgentID: "A1", Attempt: 3, RunDir: "/r", OrchestratorID: "o", ExecutorID: "codex",
		Cwd:       "/repo",
		EnvFilter: EnvFilter{Scrub: []string{"ANTHROPIC_BASE_URL"}},
		Env:       map[string]string{"API_TOKEN": RedactedValue, "NEW_TOKEN": RedactedValue, "MODE": "x"}}
	base := []string{"PATH=/bin", "PWD=/elsewhere", "TMUX=/tmp/x,1,0", "TMUX_PANE=%1", "ANTHROPIC_BASE_URL=http://bad", "API_TOKEN=real", "MODE=old"}
	env := map[string]string{}
	for _, kv := range agentEnv(base, p) {
		k, v, _ := cut(kv)
		env[k] = v
	}
	for k, want := range map[string]string{"PATH": "/bin", "PWD": "/repo", "API_TOKEN": "real", "NEW_TOKEN": RedactedValue, "MODE": "x",
		"WAVE_LANE": "main", "WAVE_NUMBER": "2", "WAVE_AGENT_ID": "A1", "WAVE_ATTEMPT": "3", "WAVE_RUN_DIR": "/r",
		"WAVE_ORCHESTRATOR_ID": "o", "WAVE_EXECUTOR_MODE": "codex"} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	for _, k := range []string{"TMUX", "TMUX_PANE", "ANTHROPIC_BASE_URL"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s not removed", k)
		}
	}
}

func cut(kv string) (string, string, bool) {
	for i := range kv {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

func TestRateLimitDelay(t *testing.T) {
	t.Parallel()
	rl := RateLimit{Retries: 5, BaseDelayMs: 1000, MaxDelayMs: 5000}
	for _, tc := range []struct {
		k      int
		jitter float64
		want   time.Duration
	}{
		{1, 0, time.Second}, {2, 0, 2 * time.Second}, {3, 0, 4 * time.Second}, {4, 0, 5 * time.Second},
		{10, 0, 5 * time.Second}, {1, 0.999, time.Second + 249750*time.Microsecond},
	} {
		if got := rateLimitDelay(rl, tc.k, tc.jitter); got != tc.want {
			t.Errorf("k=%d jitter=%v: %v, want %v", tc.k, tc.jitter, got, tc.want)
		}
	}
}

func TestRateLimitScannerAcrossChunks(t *testing.T) {
	t.Parallel()
	var s rateLimitScanner
	s.Write([]byte("HTTP 429 Too Many "))
	if s.matched() {
		t.Fatal("matched early")
	}
	s.Write([]byte("Requests\n"))
	if !s.matched() {
		t.Fatal("split match missed")
	}
	var n rateLimitScanner
	n.Write([]byte("all good, limited scope"))
	if n.matched() {
		t.Fatal("false positive")
	}
}

func TestRateLimitOnlyAtTheEnd(t *testing.T) {
	t.Parallel()
	early := "implementing a rate limit for the API client\n" + strings.Repeat("test output line\n", 30) + "FAIL: 2 tests\n"
	long := "429 Too Many Requests\n" + strings.Repeat("x", 5000) + "\nexit 1\n"
	for _, tc := range []struct {
		name, out string
		want      bool
	}{
		{"at the end", "working\nerror: 429 Too Many Requests\n\n", true},
		{"20th line from the end", "rate limit hit\n" + strings.Repeat("retrying\n", 19), true},
		{"21st line from the end", "rate limit hit\n" + strings.Repeat("retrying\n", 20), false},
		{"early in a long output", early, false},
		{"beyond the last 4 KiB", long, false},
	} {
		var s rateLimitScanner
		for chunk := range slices.Chunk([]byte(tc.out), 7) {
			s.Write(chunk)
		}
		if got := s.matched(); got != tc.want {
			t.Errorf("%s: matched %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseStat(t *testing.T) {
	t.Parallel()
	line := "123 (a) b) c) S 1 123 120 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 98765 0 0"
	st, err := parseStat([]byte(line))
	if err != nil || st != (procStat{pgrp: 123, sid: 120, start: 98765}) {
		t.Fatalf("got %+v %v", st, err)
	}
	zl := "9 (x) Z 1 7 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0"
	if st, _ := parseStat([]byte(zl)); !st.zombie || st.pgrp != 7 {
		t.Fatalf("zombie line: %+v", st)
	}
	if _, err := parseStat([]byte("garbage")); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	code := func(n int) *int { return &n }
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	running := func() *Record {
		return &Record{RunnerPid: 10, RunnerStartTime: 5, TerminalDisposition: Running, HeartbeatIntervalMs: 100, LastHeartbeatAt: now, StartedAt: past, SessionName: "w1-A"}
	}
	terminal := func(d string, c int, sig string, fin time.Time) *Record {
		r := running()
		r.TerminalDisposition, r.ExitCode, r.Signal, r.FinishedAt = d, code(c), sig, &fin
		return r
	}
	stale := running()
	stale.LastHeartbeatAt = now.Add(-time.Second)
	gone := running() // heartbeat stale past the wait for tmux
	gone.LastHeartbeatAt = now.Add(-paneSettleMax - time.Second)
	stalled := terminal(Terminated, 143, "SIGTERM", now)
	stalled.Stalled = true
	lostPane := running()
	lostPane.SessionLost = true
	dead := func(status int) SessionFacts {
		return SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 10, Dead: true, DeadStatus: code(status)}}
	}
	corrupt := errors.New("runtime.json: unreadable")
	launching := &Record{TerminalDisposition: Launching, StartedAt: now.Add(-time.Minute), SessionName: "w1-A"}
	freshLaunch := &Record{TerminalDisposition: Launching, StartedAt: now, SessionName: "w1-A"}
	for _, tc := range []struct {
		name      string
		f         Facts
		state     State
		done      bool
		exit      *int
		signal    string
		warnings  int
		terminate bool
	}{
		{"completed record", Facts{Record: terminal(Completed, 0, "", now)}, StateCompleted, true, code(0), "", 0, false},
		{"failed record wins over live runner", Facts{Record: terminal(Failed, 3, "", now), RunnerAlive: true}, StateFailed, true, code(3), "", 0, false},
		{"terminated after deadline is timed out", Facts{Record: terminal(Terminated, 137, "SIGKILL", now), Deadline: &past}, StateTimedOut, true, code(137), "SIGKILL", 0, false},
		{"terminated before deadline", Facts{Record: terminal(Terminated, 143, "SIGTERM", now), Deadline: &future}, StateTerminated, true, code(143), "SIGTERM", 0, false},
		{"status without record", Facts{Record: running(), Status: &Status{Code: 2}}, StateFailed, true, code(2), "", 0, false},
		{"status with signal", Facts{Record: running(), Status: &Status{Code: 137, Signal: "SIGKILL"}}, StateTerminated, true, code(137), "SIGKILL", 0, false},
		{"status file while the runner still writes its record (over budget?): not done", Facts{Record: running(), Status: &Status{Code: 143, Signal: "SIGTERM"}, RunnerAlive: true}, StateRunning, false, nil, "", 0, false},
		{"live runner", Facts{Record: running(), RunnerAlive: true}, StateRunning, false, nil, "", 0, false},
		{"stale heartbeat warns", Facts{Record: stale, RunnerAlive: true}, StateRunning, false, nil, "", 1, false},
		{"missing session with live runner only warns", Facts{Record: running(), RunnerAlive: true, Session: SessionFacts{Known: true}}, StateRunning, false, nil, "", 1, false},
		{"deadline passed asks to terminate", Facts{Record: running(), RunnerAlive: true, Deadline: &past}, StateRunning, false, nil, "", 0, true},
		{"dead runner is lost", Facts{Record: running()}, StateLost, true, nil, "", 0, false},
		{"dead runner with pane status", Facts{Record: running(), Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Dead: true, DeadStatus: code(4)}}}, StateLost, true, code(4), "", 0, false},
		{"dead runner with pane signal", Facts{Record: running(), Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Dead: true, DeadSignal: 9}}}, StateLost, true, code(137), "SIGKILL", 0, false},
		{"dead runner, tmux not yet reaped its pane", Facts{Record: running(), Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 10}}}, StateLost, false, nil, "", 0, false},
		{"dead runner, pane closed without status yet", Facts{Record: running(), Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 10, Dead: true}}}, StateLost, false, nil, "", 0, false},
		{"dead runner, pane never reported, heartbeat long stale", Facts{Record: gone, Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 10, Dead: true}}}, StateLost, true, nil, "", 0, false},
		{"dead runner, pane runs another process", Facts{Record: running(), Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 7}}}, StateLost, true, nil, "", 0, false},
		{"dead runner, pane not yet reported, heartbeat just stale", Facts{Record: stale, Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 10, Dead: true}}}, StateLost, false, nil, "", 0, false},
		{"dead runner, tmux did not answer", Facts{Record: stale, Session: SessionFacts{Unanswered: true}}, StateLost, false, nil, "", 0, false},
		{"dead runner, tmux long silent", Facts{Record: gone, Session: SessionFacts{Unanswered: true}}, StateLost, true, nil, "", 0, false},
		{"runner exited 0 unrecorded: pane status", Facts{Record: stale, Session: dead(0)}, StateCompleted, true, code(0), "", 0, false},
		{"runner exited 3 unrecorded: pane status", Facts{Record: gone, Session: dead(3)}, StateFailed, true, code(3), "", 0, false},
		{"pane status but the agent lives on", Facts{Record: stale, Session: dead(0), AgentAlive: true}, StateLost, true, code(0), "", 1, true},
		{"runner left its exit code on the session", Facts{Record: stale, Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 10, Dead: true, ExitOption: code(5)}}}, StateFailed, true, code(5), "", 0, false},
		{"stalled record", Facts{Record: stalled}, StateStalled, true, code(143), "SIGTERM", 0, false},
		{"lost session with live runner warns", Facts{Record: lostPane, RunnerAlive: true}, StateRunning, false, nil, "", 1, false},
		{"corrupt record, fresh", Facts{RecordErr: corrupt, RecordAge: time.Second, HeartbeatInterval: time.Second}, StateUnknown, false, nil, "", 0, false},
		{"corrupt record, old", Facts{RecordErr: corrupt, RecordAge: time.Minute}, StateLost, true, nil, "", 0, false},
		{"corrupt record, pane alive", Facts{RecordErr: corrupt, RecordAge: time.Minute, Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{Pid: 10}}}, StateLost, true, nil, "", 1, true},
		{"corrupt record, readable status", Facts{RecordErr: corrupt, Status: &Status{Code: 0}}, StateCompleted, true, code(0), "", 0, false},
		{"orphaned agent", Facts{Record: running(), AgentAlive: true}, StateLost, true, nil, "", 1, true},
		{"launching, session alive", Facts{Record: launching, Session: SessionFacts{Known: true, Exists: true, Pane: &tmuxadapter.Pane{}}}, StateLaunching, false, nil, "", 0, false},
		{"launching, session never came", Facts{Record: launching, Session: SessionFacts{Known: true}, LaunchGrace: time.Second}, StateLost, true, nil, "", 0, false},
		{"launching, within grace", Facts{Record: freshLaunch, Session: SessionFacts{Known: true}, LaunchGrace: time.Second}, StateLaunching, false, nil, "", 0, false},
		{"launching, tmux indeterminate", Facts{Record: launching}, StateLaunching, false, nil, "", 0, false},
		{"no record", Facts{}, StateUnknown, false, nil, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Now = now
			v := Classify(tc.f)
			if v.State != tc.state || v.Done != tc.done || v.Signal != tc.signal || len(v.Warnings) != tc.warnings || v.Terminate != tc.terminate ||
				(tc.exit == nil) != (v.ExitCode == nil) || (tc.exit != nil && *tc.exit != *v.ExitCode) {
				t.Fatalf("got %+v", v)
			}
		})
	}
}

func TestACheckoutRunsPathsFollowItsMounts(t *testing.T) {
	t.Parallel()
	p := &Payload{RunDir: "/r/run", Cwd: "/w/repo", PromptPath: "/r/run/prompt.md", Stdin: "/r/run/prompt.md",
		Argv:     []string{"claude", "--settings", "/r/run/claude-settings.json", "/r/runner"},
		Env:      map[string]string{"WAVE_WORKTREE": "/w/repo", "OTHER": "/w/repository"},
		Checkout: &Checkout{Dir: "/w/repo"}}
	relocate(p, p.Checkout.Dir, "/node/pod1/w/repo")
	relocate(p, p.RunDir, "/node/pod1/r/run")
	if p.Cwd != "/node/pod1/w/repo" || p.Checkout.Dir != p.Cwd || p.Env["WAVE_WORKTREE"] != p.Cwd || p.Env["OTHER"] != "/w/repository" {
		t.Errorf("checkout paths: cwd %s dir %s env %v", p.Cwd, p.Checkout.Dir, p.Env)
	}
	if p.RunDir != "/node/pod1/r/run" || p.Stdin != "/node/pod1/r/run/prompt.md" || p.Argv[2] != "/node/pod1/r/run/claude-settings.json" || p.Argv[3] != "/r/runner" {
		t.Errorf("run dir paths: %s %s %v", p.RunDir, p.Stdin, p.Argv)
	}
	q := &Payload{RunDir: "/r/run", Checkout: &Checkout{Dir: "/w"}}
	relocate(q, q.RunDir, "/r/run")
	if q.RunDir != "/r/run" {
		t.Errorf("a mount at its own path moved the run dir to %s", q.RunDir)
	}
}
