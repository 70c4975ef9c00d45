package runtime

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter"
	"github.com/wave-orchestrator/wave-orchestrator/tmuxadapter/tmuxtest"
)

// The test binary doubles as the runner (`agent-run`, the session command)
// and as a scriptable fake agent (`fake-agent <mode> ...`).
func TestMain(m *testing.M) {
	if code, ok := sandbox.Main(os.Args[1:]); ok {
		os.Exit(code)
	}
	if code, ok := HoldMain(os.Args[1:]); ok {
		os.Exit(code)
	}
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "agent-run":
			if len(os.Args) != 4 || os.Args[2] != "--payload" {
				fmt.Fprintln(os.Stderr, "usage: agent-run --payload PATH")
				os.Exit(2)
			}
			os.Exit(RunAgent(context.Background(), os.Args[3], Stdio{In: os.Stdin, Out: os.Stdout}))
		case "fake-agent":
			os.Exit(fakeAgent(os.Args[2:]))
		}
	}
	os.Exit(tmuxtest.Run(m, nil))
}

// fakeAgent is the scriptable agent. Modes:
//
//	exit N                 print a line, exit N
//	stamp FILE N           write the time (Unix ns) to FILE, exit N
//	hang                   print "ready", wait for a signal
//	ignore-term            ignore SIGTERM/SIGHUP, print "ready", wait
//	echo                   print "ready", answer each stdin line "got: <line>"
//	ratelimit FILE K       count starts in FILE; the first K print a 429 and exit 1
//	args FILE              write argv and WAVE_* env as JSON to FILE, exit 0
//	spawn FILE setsid|group|pgid  start a `guard FILE` child sharing the pty
//	                       (in its own session, in the agent's group, or in
//	                       a group of its own in the agent's session), wait
//	                       until it is ready, print "spawned", exit 0
//	env FILE               write the environment as a JSON object to FILE, exit 0
//	guard FILE             ignore SIGTERM/SIGHUP, write its pid to FILE, wait
//	wait-file FILE N       print "ready", wait until FILE exists, print
//	                       "resumed", exit N
//	jam-tmp N              make $WAVE_RUN_DIR/.tmp a regular file (so no
//	                       record can be written there, as on a full
//	                       disk), print "jammed", exit N
//	chatty D               print a line every 20ms for duration D, exit 0
//	graceful FILE          print "ready"; on SIGTERM write "stopping" to
//	                       FILE, take 300ms to wind down, write "graceful"
//	                       to FILE and exit 0
//	try ACTION...          sandbox probes, each printed "ACTION: ok|err":
//	                       write:PATH, connect:HOSTPORT (a CONNECT through
//	                       $HTTPS_PROXY; ok with the status code)
//	flood FILE N           write N bytes of text lines to stdout, then a
//	                       "flood done" line; write "<start ns> <end ns>" of
//	                       the writing to FILE, exit 0
func fakeAgent(args []string) int {
	wait := func() int {
		for {
			time.Sleep(time.Hour)
		}
	}
	switch args[0] {
	case "exit":
		n, _ := strconv.Atoi(args[1])
		fmt.Println("fake agent exiting with", n)
		return n
	case "stamp":
		// The moment of exit, for latency benchmarks: written last.
		n, _ := strconv.Atoi(args[2])
		os.WriteFile(args[1], []byte(strconv.FormatInt(time.Now().UnixNano(), 10)), 0o644)
		return n
	case "hang":
		fmt.Println("ready")
		return wait()
	case "graceful":
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM)
		fmt.Println("ready")
		<-sigs
		os.WriteFile(args[1], []byte("stopping"), 0o644)
		time.Sleep(300 * time.Millisecond) // its clean-up
		os.WriteFile(args[1], []byte("graceful"), 0o644)
		return 0
	case "try":
		for _, a := range args[1:] {
			fmt.Printf("%s: %s\n", a, tryAction(a))
		}
		return 0
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		fmt.Println("ready")
		return wait()
	case "echo":
		fmt.Println("ready")
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			fmt.Println("got: " + sc.Text())
		}
		return 0
	case "ratelimit":
		data, _ := os.ReadFile(args[1])
		n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		n++
		os.WriteFile(args[1], []byte(strconv.Itoa(n)), 0o644)
		k, _ := strconv.Atoi(args[2])
		if n <= k {
			fmt.Println("error: 429 Too Many Requests")
			return 1
		}
		fmt.Println("done")
		return 0
	case "args":
		out := map[string]any{"argv": args[2:], "agent": os.Getenv("WAVE_AGENT_ID"), "prompt": os.Getenv("PROMPT"), "tmux": os.Getenv("TMUX")}
		data, _ := json.Marshal(out)
		os.WriteFile(args[1], data, 0o644)
		return 0
	case "spawn":
		self, _ := os.Executable()
		cmd := exec.Command(self, "fake-agent", "guard", args[1])
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: args[2] == "setsid", Setpgid: args[2] == "pgid"}
		if err := cmd.Start(); err != nil {
			fmt.Println("spawn:", err)
			return 1
		}
		for {
			if _, err := os.Stat(args[1]); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		fmt.Println("spawned")
		return 0
	case "env":
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		data, _ := json.Marshal(env)
		os.WriteFile(args[1], data, 0o644)
		return 0
	case "wait-file":
		fmt.Println("ready")
		for {
			if _, err := os.Stat(args[1]); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		fmt.Println("resumed")
		n, _ := strconv.Atoi(args[2])
		return n
	case "jam-tmp":
		tmp := filepath.Join(os.Getenv("WAVE_RUN_DIR"), ".tmp")
		// Moved aside, not removed: the runner may be writing a heartbeat
		// into it right now, and RemoveAll of a directory that gains a
		// file meanwhile fails.
		if err := os.Rename(tmp, tmp+".jammed"); err != nil && !os.IsNotExist(err) {
			fmt.Println("jam:", err)
			return 1
		}
		if err := os.WriteFile(tmp, []byte("jammed"), 0o644); err != nil {
			fmt.Println("jam:", err)
			return 1
		}
		fmt.Println("jammed")
		n, _ := strconv.Atoi(args[1])
		return n
	case "chatty":
		d, _ := time.ParseDuration(args[1])
		for end := time.Now().Add(d); time.Now().Before(end); {
			fmt.Println("still working")
			time.Sleep(20 * time.Millisecond)
		}
		return 0
	case "flood":
		return flood(args[1], args[2])
	case "guard":
		signal.Ignore(syscall.SIGTERM, syscall.SIGHUP)
		tmp := args[1] + ".tmp"
		os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())), 0o644)
		os.Rename(tmp, args[1])
		return wait()
	}
	fmt.Fprintln(os.Stderr, "fake-agent: unknown mode", args)
	return 2
}

var socketSeq atomic.Int64

// harness is one isolated tmux server with a backend whose runner is this
// test binary.
type harness struct {
	t  *testing.T
	tm *tmuxadapter.Client
	b  *TmuxBackend
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tm := tmuxadapter.New(fmt.Sprintf("rt%d-%d", os.Getpid(), socketSeq.Add(1)))
	t.Cleanup(func() { tm.KillServer(context.Background()) })
	return &harness{tm: tm, b: NewTmuxBackend(tm, self, nil)}
}

// payload returns a run of the fake agent in mode args under root.
func (h *harness) payload(t testing.TB, root, id string, args ...string) *Payload {
	t.Helper()
	self, _ := os.Executable()
	return &Payload{
		RunID: "w1-" + id + "-a1", Lane: "main", WaveNumber: 1, Attempt: 1, AgentID: id, ExecutorID: "local",
		OrchestratorID: "test", Argv: append([]string{self, "fake-agent"}, args...),
		RunDir: filepath.Join(root, id+"-a1"), SessionName: "w1-" + id, Cwd: root,
		HeartbeatIntervalMs: 100,
	}
}

// start starts the runs and, at the end of the test, stops those still
// running: agents outlive their tmux server, so killing it ends nothing.
func (h *harness) start(t testing.TB, ps ...*Payload) {
	t.Helper()
	t.Cleanup(func() {
		for _, p := range ps {
			h.b.Terminate(context.Background(), p.RunDir, 200*time.Millisecond, true)
		}
	})
	if err := h.b.Start(context.Background(), ps); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitDone waits until the run is classified final and, unless it is
// lost, its terminal record is written (status.json comes first).
func (h *harness) waitDone(t testing.TB, dir string) Observation {
	t.Helper()
	var obs Observation
	waitFor(t, "run "+dir+" to finish", func() bool {
		obs, _ = h.b.Observe(context.Background(), dir, time.Now())
		return obs.Verdict.State == StateLost || obs.Record != nil && isTerminal(obs.Record.TerminalDisposition)
	})
	return obs
}

// waitRunning waits until the agent has started and returns the record.
func waitRunning(t testing.TB, p *Payload) *Record {
	t.Helper()
	var rec *Record
	waitFor(t, "agent "+p.AgentID+" to print ready", func() bool {
		rec, _ = ReadRecord(filepath.Join(p.RunDir, runtimeFile))
		log, _ := os.ReadFile(filepath.Join(p.RunDir, logFile))
		return rec != nil && rec.ExecutorPid != 0 && strings.Contains(string(log), "ready")
	})
	return rec
}

// flood is the fake agent's flood mode (see fakeAgent).
func flood(stamp, size string) int {
	n, _ := strconv.ParseInt(size, 10, 64)
	line := []byte(strings.Repeat("flood output line padding text ", 3) + "\n")
	chunk := make([]byte, 0, 64<<10)
	for len(chunk)+len(line) <= cap(chunk) {
		chunk = append(chunk, line...)
	}
	start := time.Now()
	for n > 0 {
		c := chunk[:min(int64(len(chunk)), n)]
		if _, err := os.Stdout.Write(c); err != nil {
			return 1
		}
		n -= int64(len(c))
	}
	fmt.Println("\nflood done")
	end := time.Now()
	os.WriteFile(stamp, []byte(fmt.Sprintf("%d %d", start.UnixNano(), end.UnixNano())), 0o644)
	return 0
}
