package runtime

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkLaunch50 is the wall time to start 50 trivial runs in one batch
// and see all of them terminal.
func BenchmarkLaunch50(b *testing.B) {
	h := newHarness(b)
	for i := 0; b.Loop(); i++ {
		root := filepath.Join(b.TempDir(), fmt.Sprint(i))
		var ps []*Payload
		for j := range 50 {
			p := h.payload(b, root, fmt.Sprintf("A%d", j), "exit", "0")
			p.SessionName = fmt.Sprintf("b%d-A%d", i, j)
			ps = append(ps, p)
		}
		h.start(b, ps...)
		for _, p := range ps {
			h.waitDone(b, p.RunDir)
		}
		b.StopTimer()
		h.tm.KillServer(context.Background())
		b.StartTimer()
	}
}

// BenchmarkExitToWatcherEvent measures, over 200 runs started 50 at a time,
// the latency from the agent's exit (the fake agent writes the time just
// before it exits) to a consumer receiving the final Change. As in the
// launcher, directories are added before Start and the consumer reads
// concurrently with Start.
func BenchmarkExitToWatcherEvent(b *testing.B) {
	h := newHarness(b)
	for i := 0; b.Loop(); i++ {
		lat := exitLatencies(b, h, filepath.Join(b.TempDir(), fmt.Sprint(i)), fmt.Sprint(i))
		slices.Sort(lat)
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
		h.tm.KillServer(context.Background())
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func exitLatencies(b *testing.B, h *harness, root, tag string) []time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := NewWatcher(slogDiscard(), WithBackend(h.b))
	go w.Run(ctx)
	var lat []time.Duration
	for batch := range 4 {
		var ps []*Payload
		stamps := map[string]string{}
		for j := range 50 {
			id := fmt.Sprintf("A%d-%d", batch, j)
			stamp := filepath.Join(root, id+".exit")
			p := h.payload(b, root, id, "stamp", stamp, "0")
			p.SessionName = fmt.Sprintf("e%s-%d-%d", tag, batch, j)
			if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
				b.Fatal(err)
			}
			w.Add(p.RunDir)
			stamps[filepath.Clean(p.RunDir)] = stamp
			ps = append(ps, p)
		}
		got := make(chan map[string]time.Time)
		go func() {
			recv := map[string]time.Time{}
			for c := range w.Changes() {
				if _, ok := stamps[c.RunDir]; ok && c.Obs.Verdict.Done && recv[c.RunDir].IsZero() {
					recv[c.RunDir] = time.Now()
					if len(recv) == len(stamps) {
						break
					}
				}
			}
			got <- recv
		}()
		h.start(b, ps...)
		recv := <-got
		for dir, at := range recv {
			data, err := os.ReadFile(stamps[dir])
			ns, perr := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
			if err != nil || perr != nil {
				b.Fatalf("exit stamp of %s: %v %v", dir, err, perr)
			}
			lat = append(lat, at.Sub(time.Unix(0, ns)))
		}
		if len(recv) != len(stamps) {
			b.Fatalf("batch %d: %d of %d final changes", batch, len(recv), len(stamps))
		}
	}
	return lat
}

// BenchmarkObserveRunning is one Observe of a live run, the unit of the
// watcher's and the launcher's sweeps.
func BenchmarkObserveRunning(b *testing.B) {
	dir := b.TempDir()
	p := &Payload{RunID: "w1-A1-a1", RunDir: dir, Argv: []string{"claude", "-p", strings.Repeat("x", 200)},
		Env: map[string]string{"A": "1", "B": "2", "PATH": "/usr/bin"}, Cwd: dir, SessionName: "w1-A1"}
	p.FillPaths()
	if err := WriteJSON(filepath.Join(dir, launchFile), p); err != nil {
		b.Fatal(err)
	}
	rw := newRecordWriter(p, time.Now())
	if err := rw.update(func(r *Record) { r.TerminalDisposition = Running }); err != nil {
		b.Fatal(err)
	}
	be := NewTmuxBackend(nil, "", slogDiscard())
	for b.Loop() {
		obs, _ := be.Observe(context.Background(), dir, time.Now())
		if obs.Verdict.State != StateRunning {
			b.Fatal(obs.Verdict)
		}
	}
}

// BenchmarkFlood200MB is one agent printing 200 MB through the runner: into
// a real tmux pane (which renders far slower than the agent writes), and,
// for reference, with the runner's output going to /dev/null. It reports
// how long the agent itself took to write (agent-s: the slowdown the pane
// imposes on it) and the wall time until its run is terminal.
func BenchmarkFlood200MB(b *testing.B) {
	b.Run("pane=tmux", func(b *testing.B) {
		h := newHarness(b)
		for i := 0; b.Loop(); i++ {
			p := floodPayload(b, h, i)
			t0 := time.Now()
			h.start(b, p)
			var obs Observation
			// Longer than waitDone allows: the runner before the pane was
			// decoupled took over 20 s on a loaded machine.
			for end := t0.Add(5 * time.Minute); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
				if obs, _ = h.b.Observe(context.Background(), p.RunDir, time.Now()); obs.Verdict.Done {
					break
				}
			}
			reportFlood(b, p, obs, time.Since(t0))
			h.tm.KillServer(context.Background())
		}
	})
	b.Run("pane=devnull", func(b *testing.B) {
		h := newHarness(b)
		self, _ := os.Executable()
		for i := 0; b.Loop(); i++ {
			p := floodPayload(b, h, i)
			p.FillPaths()
			launch := filepath.Join(p.RunDir, launchFile)
			if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
				b.Fatal(err)
			}
			if err := WriteJSON(launch, p); err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			if err := exec.Command(self, "agent-run", "--payload", launch).Run(); err != nil {
				b.Fatal(err)
			}
			obs := ObserveFiles(p.RunDir, time.Now())
			reportFlood(b, p, obs, time.Since(t0))
		}
	})
}

const floodBytes = 200 << 20

func floodPayload(b *testing.B, h *harness, i int) *Payload {
	root := filepath.Join(b.TempDir(), fmt.Sprint(i))
	p := h.payload(b, root, "A1", "flood", filepath.Join(root, "flood.stamp"), strconv.Itoa(floodBytes))
	p.SessionName = fmt.Sprintf("flood%d", i)
	p.MaxLogBytes = 64 << 20
	return p
}

func reportFlood(b *testing.B, p *Payload, obs Observation, wall time.Duration) {
	if obs.Verdict.State != StateCompleted {
		b.Fatalf("verdict %+v", obs.Verdict)
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(p.RunDir), "flood.stamp"))
	var s, e int64
	if _, perr := fmt.Sscanf(string(data), "%d %d", &s, &e); err != nil || perr != nil {
		b.Fatalf("stamp: %v %v", err, perr)
	}
	b.ReportMetric(time.Duration(e-s).Seconds(), "agent-s")
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(float64(floodBytes)/(1<<20)/time.Duration(e-s).Seconds(), "agent-MB/s")
}

// BenchmarkStallDetection is an agent that prints "ready" and then nothing,
// with a 1 s silence window: stop-s is the time from its last output to
// its terminal record (the window, up to one check interval, and the
// agent's exit on TERM).
func BenchmarkStallDetection(b *testing.B) {
	h := newHarness(b)
	for i := 0; b.Loop(); i++ {
		p := h.payload(b, filepath.Join(b.TempDir(), fmt.Sprint(i)), "A1", "hang")
		p.SessionName = fmt.Sprintf("stall%d", i)
		p.SilenceMs = 1000
		h.start(b, p)
		obs := h.waitDone(b, p.RunDir)
		rec := obs.Record
		if obs.Verdict.State != StateStalled || rec.LastOutputAt == nil || rec.FinishedAt == nil {
			b.Fatalf("verdict %+v record %+v", obs.Verdict, rec)
		}
		b.ReportMetric(rec.FinishedAt.Sub(*rec.LastOutputAt).Seconds(), "stop-s")
	}
}
