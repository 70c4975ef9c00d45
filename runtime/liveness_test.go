package runtime

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitVerdict waits until the run is classified done.
func (h *harness) waitVerdict(t testing.TB, dir string) Observation {
	t.Helper()
	var obs Observation
	waitFor(t, "a final verdict for "+dir, func() bool {
		obs, _ = h.b.Observe(context.Background(), dir, time.Now())
		return obs.Verdict.Done
	})
	return obs
}

func hasWarning(v Verdict, sub string) bool {
	return slices.ContainsFunc(v.Warnings, func(w string) bool { return strings.Contains(w, sub) })
}

// waitSessionLost waits until the runner records that its pane is gone
// (or, wrongly, that the run ended) and returns the record.
func waitSessionLost(t testing.TB, p *Payload) *Record {
	t.Helper()
	var rec *Record
	waitFor(t, "runtime.json of "+p.AgentID+" to record the lost session", func() bool {
		rec, _ = ReadRecord(p.RuntimePath)
		return rec != nil && (rec.SessionLost || isTerminal(rec.TerminalDisposition))
	})
	return rec
}

// kill-session takes the pane, not the agent: the runner keeps it running,
// records the loss, and reports the agent's real exit code at the end.
func TestAgentOutlivesKillSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	resume := filepath.Join(root, "resume")
	p := h.payload(t, root, "A1", "wait-file", resume, "3")
	h.start(t, p)
	waitRunning(t, p)
	ctx := context.Background()
	if err := h.tm.KillSession(ctx, p.SessionName); err != nil {
		t.Fatal(err)
	}
	rec := waitSessionLost(t, p)
	if isTerminal(rec.TerminalDisposition) || rec.SessionLostAt == nil {
		t.Fatalf("record after kill-session: %+v", rec)
	}
	obs, _ := h.b.Observe(ctx, p.RunDir, time.Now())
	if obs.Verdict.State != StateRunning || obs.Verdict.Done || !hasWarning(obs.Verdict, "session") {
		t.Fatalf("verdict while the session is gone: %+v", obs.Verdict)
	}
	if err := os.WriteFile(resume, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	obs = h.waitDone(t, p.RunDir)
	if v := obs.Verdict; v.State != StateFailed || v.ExitCode == nil || *v.ExitCode != 3 || v.Signal != "" {
		t.Fatalf("verdict %+v", v)
	}
	log, _ := os.ReadFile(p.LogPath)
	for _, want := range []string{"resumed", "session lost", "finished with code 3"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("agent.log lacks %q:\n%s", want, log)
		}
	}
}

// kill-server takes every pane at once; every agent keeps running and
// finishes with its own result.
func TestAgentsOutliveKillServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	resume := filepath.Join(root, "resume")
	var ps []*Payload
	for i := range 6 {
		ps = append(ps, h.payload(t, root, "A"+string(rune('0'+i)), "wait-file", resume, "0"))
	}
	h.start(t, ps...)
	for _, p := range ps {
		waitRunning(t, p)
	}
	if err := h.tm.KillServer(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if rec := waitSessionLost(t, p); isTerminal(rec.TerminalDisposition) {
			t.Fatalf("%s ended with its session: %+v", p.AgentID, rec)
		}
	}
	if err := os.WriteFile(resume, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if v := h.waitDone(t, p.RunDir).Verdict; v.State != StateCompleted || *v.ExitCode != 0 {
			t.Errorf("%s: %+v", p.AgentID, v)
		}
	}
}

// A stop the runner forwards reaches an agent that ignores it as KILL
// after the grace, so it cannot hang the wave.
func TestForwardedTermEscalatesToKill(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.payload(t, t.TempDir(), "A1", "ignore-term")
	p.TerminateGraceMs = 200
	h.start(t, p)
	rec := waitRunning(t, p)
	if err := syscall.Kill(rec.RunnerPid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	v := h.waitDone(t, p.RunDir).Verdict
	if v.State != StateTerminated || v.Signal != "SIGKILL" || *v.ExitCode != 137 || !strings.Contains(v.Reason, "SIGTERM") {
		t.Fatalf("verdict %+v", v)
	}
}

// Garbage in both records of a finished run (no runner writes them any
// more) is a lost run naming the files, not one launching forever.
func TestCorruptRecordsAreLost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRunFile(t, dir, launchFile, `{"runId":"w1-A1-a1","heartbeatIntervalMs":100,"sessionName":"w1-A1"}`)
	writeRunFile(t, dir, runtimeFile, "{\"runId\": \"w1-A1-a1\", garbage")
	writeRunFile(t, dir, statusFile, "\x00\x01 not json")
	old := time.Now().Add(-time.Minute)
	for _, f := range []string{runtimeFile, statusFile} {
		if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	v := ObserveFiles(dir, time.Now()).Verdict
	if v.State != StateLost || !v.Done || !strings.Contains(v.Reason, "corrupt") ||
		!strings.Contains(v.Reason, runtimeFile) || !strings.Contains(v.Reason, statusFile) {
		t.Fatalf("verdict %+v", v)
	}
	// Through the tmux backend (its session is long gone) the same.
	h := newHarness(t)
	obs, err := h.b.Observe(context.Background(), dir, time.Now())
	if obs.Verdict.State != StateLost || !obs.Verdict.Done || err == nil {
		t.Fatalf("backend verdict %+v, err %v", obs.Verdict, err)
	}
	if err := h.b.Terminate(context.Background(), dir, 50*time.Millisecond, false); err != nil {
		t.Fatalf("terminate a run with a corrupt record: %v", err)
	}
}

// A record that just became unreadable may be rewritten by a live runner
// at its next heartbeat: not yet lost.
func TestFreshCorruptRecordWaits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRunFile(t, dir, launchFile, `{"runId":"w1-A1-a1","heartbeatIntervalMs":60000}`)
	writeRunFile(t, dir, runtimeFile, "garbage")
	if v := ObserveFiles(dir, time.Now()).Verdict; v.Done || !strings.Contains(v.Reason, runtimeFile) {
		t.Fatalf("verdict %+v", v)
	}
}

func writeRunFile(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// While records cannot be written (a full disk) the runner keeps trying;
// once space is back, the real outcome is recorded.
func TestOutcomeRecordedOnceTheDiskFrees(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.payload(t, t.TempDir(), "A1", "jam-tmp", "3")
	h.start(t, p)
	var obs Observation
	waitFor(t, "the runner to retry recording", func() bool {
		log, _ := os.ReadFile(p.LogPath)
		obs, _ = h.b.Observe(context.Background(), p.RunDir, time.Now())
		return strings.Contains(string(log), "retrying") || obs.Verdict.Done
	})
	if obs.Verdict.Done {
		t.Fatalf("classified while the runner should be retrying: %+v", obs.Verdict)
	}
	if err := os.Remove(filepath.Join(p.RunDir, tmpDir)); err != nil {
		t.Fatal(err)
	}
	obs = h.waitDone(t, p.RunDir)
	if v := obs.Verdict; v.State != StateFailed || *v.ExitCode != 3 {
		t.Fatalf("verdict %+v", v)
	}
	if st, err := ReadStatus(p.StatusPath); err != nil || st.Code != 3 {
		t.Fatalf("status %+v, %v", st, err)
	}
}

// When the runner could never record the outcome, the pane's exit status
// (the runner exits with the agent's code) still gives the result.
func TestPaneExitStatusIsTheSecondChannel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	for _, tc := range []struct {
		code  string
		state State
	}{{"0", StateCompleted}, {"3", StateFailed}} {
		p := h.payload(t, root, "A"+tc.code, "jam-tmp", tc.code)
		p.RecordRetryMs = 200
		h.start(t, p)
		v := h.waitVerdict(t, p.RunDir).Verdict
		if v.State != tc.state || v.ExitCode == nil || *v.ExitCode != int([]rune(tc.code)[0]-'0') {
			t.Errorf("code %s: verdict %+v", tc.code, v)
		}
	}
}

// An agent that prints, then nothing for the silence window, is stopped
// (KILL after the grace if it ignores TERM) and classified stalled.
func TestSilentAgentIsStalled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	p := h.payload(t, t.TempDir(), "A1", "ignore-term")
	p.SilenceMs = 400
	p.TerminateGraceMs = 200
	h.start(t, p)
	waitRunning(t, p)
	obs := h.waitDone(t, p.RunDir)
	v := obs.Verdict
	if v.State != StateStalled || !v.Done || v.Signal != "SIGKILL" || !strings.Contains(v.Reason, "no output for") {
		t.Fatalf("verdict %+v", v)
	}
	if !obs.Record.Stalled || obs.Record.LastOutputAt == nil || obs.Record.LastOutputAt.Before(obs.Record.StartedAt) {
		t.Fatalf("record %+v", obs.Record)
	}
	log, _ := os.ReadFile(p.LogPath)
	if !strings.Contains(string(log), "[wave] no output for") {
		t.Fatalf("log:\n%s", log)
	}
}

// An agent that keeps printing is never stalled.
func TestChattyAgentIsNotStalled(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Printing every 20 ms for longer than the silence limit; the limit
	// leaves a loaded machine room to deschedule the agent for a while.
	p := h.payload(t, t.TempDir(), "A1", "chatty", "3s")
	p.SilenceMs = 2000
	h.start(t, p)
	if v := h.waitDone(t, p.RunDir).Verdict; v.State != StateCompleted {
		t.Fatalf("verdict %+v", v)
	}
}

// A flood bounded by MaxLogBytes keeps the head and the tail, and the
// tail readers see the agent's last lines and the runner's.
func TestFloodLogIsBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	root := t.TempDir()
	p := h.payload(t, root, "A1", "flood", filepath.Join(root, "stamp"), "12000000")
	p.MaxLogBytes = 3 << 20
	h.start(t, p)
	if v := h.waitDone(t, p.RunDir).Verdict; v.State != StateCompleted {
		t.Fatalf("verdict %+v", v)
	}
	var total int64
	for _, f := range []string{p.LogPath, p.LogPath + ".1", p.LogPath + ".head"} {
		if fi, err := os.Stat(f); err == nil {
			total += fi.Size()
		}
	}
	if total > p.MaxLogBytes+64<<10 {
		t.Fatalf("logs hold %d bytes, cap %d", total, p.MaxLogBytes)
	}
	head, err := os.ReadFile(p.LogPath + ".head")
	if err != nil || !strings.HasPrefix(strings.TrimLeft(string(head), "\r\n"), "flood output line") {
		t.Fatalf("head: %v %.80q", err, head)
	}
	tail, err := ReadLogTail(p.LogPath, 256<<10)
	if err != nil || !strings.Contains(tail, "flood done") || !strings.Contains(tail, "finished with code 0") || len(tail) < 256<<10 {
		t.Fatalf("tail (%d bytes): %v ...%q", len(tail), err, tail[max(0, len(tail)-200):])
	}
}
