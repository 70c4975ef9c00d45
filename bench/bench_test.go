package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// BenchmarkLaunch50 is the wall time from Start of 50 runs of a trivial
// agent (/bin/true) in one batch until the watcher has reported all 50
// final. ns/op is the figure.
func BenchmarkLaunch50(b *testing.B) {
	l := newLane(b)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		w := l.watch(ctx)
		var ps []*runtime.Payload
		want := map[string]bool{}
		for j := range 50 {
			p := l.payload(fmt.Sprintf("L%d-%d", i, j), "/bin/true")
			ps = append(ps, p)
			want[p.RunDir] = true
		}
		addAll(b, w, ps)
		b.StartTimer()
		if err := l.b.Start(ctx, ps); err != nil {
			b.Fatal(err)
		}
		if _, err := collect(ctx, w, want); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cancel()
		l.tm.KillServer(context.Background())
		b.StartTimer()
	}
}

// BenchmarkExitToEvent is the latency from an agent's exit (the fake agent
// writes the time as its last act) to the consumer receiving the watcher's
// final Change, over 200 runs started 50 at a time.
func BenchmarkExitToEvent(b *testing.B) {
	l := newLane(b)
	for i := 0; b.Loop(); i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		w := l.watch(ctx)
		var lat []time.Duration
		for batch := range 4 {
			var ps []*runtime.Payload
			want, stamps := map[string]bool{}, map[string]string{}
			for j := range 50 {
				id := fmt.Sprintf("E%d-%d-%d", i, batch, j)
				stamp := filepath.Join(l.root, id+".exit")
				self, _ := os.Executable()
				p := l.payload(id, self, "fake-agent", "stamp", stamp)
				ps = append(ps, p)
				want[p.RunDir], stamps[p.RunDir] = true, stamp
			}
			addAll(b, w, ps)
			type result struct {
				got map[string]time.Time
				err error
			}
			res := make(chan result)
			go func() {
				got, err := collect(ctx, w, want)
				res <- result{got, err}
			}()
			if err := l.b.Start(ctx, ps); err != nil {
				b.Fatal(err)
			}
			r := <-res
			if r.err != nil {
				b.Fatal(r.err)
			}
			for dir, at := range r.got {
				exit, err := readStamp(stamps[dir])
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, at.Sub(exit))
			}
		}
		cancel()
		l.tm.KillServer(context.Background())
		slices.Sort(lat)
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkIdleRuns watches 100 live runs whose agents sleep, for -idle
// (default 30s), the way the launcher does: a Watcher over the tmux
// backend, plus an Observe of every run each second and of each changed
// run. It reports the CPU time (getrusage) of this process (self) and of
// the tmux commands it ran (children) as a percentage of one core, and
// the resident memory of the runners and their agents.
func BenchmarkIdleRuns(b *testing.B) {
	l := newLane(b)
	self, _ := os.Executable()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		ctx, cancel := context.WithCancel(context.Background())
		w := l.watch(ctx)
		var ps []*runtime.Payload
		for j := range 100 {
			ps = append(ps, l.payload(fmt.Sprintf("I%d-%d", i, j), self, "fake-agent", "sleep"))
		}
		addAll(b, w, ps)
		if err := l.b.Start(ctx, ps); err != nil {
			b.Fatal(err)
		}
		recs := waitRunning(b, ps)
		b.StartTimer()

		stopProf := profileWindow(b)
		before := usage()
		start := time.Now()
		observeLikeLauncher(ctx, l.b, w, ps, *idleFor)
		wall := time.Since(start)
		after := usage()
		stopProf()

		b.StopTimer()
		b.ReportMetric(pct(after.self-before.self, wall), "self-cpu-%")
		b.ReportMetric(pct(after.children-before.children, wall), "children-cpu-%")
		runner, agent := rssKiB(recs)
		b.ReportMetric(float64(slices.Max(runner))/1024, "runner-max-rss-MiB")
		b.ReportMetric(mean(runner)/1024, "runner-mean-rss-MiB")
		b.ReportMetric(mean(agent)/1024, "agent-mean-rss-MiB")
		cancel()
		l.tm.KillServer(context.Background())
		waitFinished(b, ps) // the runners write their last record before exiting
		b.StartTimer()
	}
}

// observeLikeLauncher mirrors launcher.waveRun.wait: Observe a run when
// the watcher reports it, and every run every 10 s (the safety net; the
// 1 s tick itself only compares deadlines).
func observeLikeLauncher(ctx context.Context, be runtime.Backend, w *runtime.Watcher, ps []*runtime.Payload, d time.Duration) {
	end := time.After(d)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for n := 1; ; {
		select {
		case <-end:
			return
		case c := <-w.Changes():
			be.Observe(ctx, c.RunDir, time.Now())
		case <-tick.C:
			if n++; n%10 != 0 {
				continue
			}
			for _, p := range ps {
				be.Observe(ctx, p.RunDir, time.Now())
			}
		}
	}
}

// waitRunning waits until every run's agent is running and returns the
// records.
func waitRunning(b *testing.B, ps []*runtime.Payload) []*runtime.Record {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	var recs []*runtime.Record
	for _, p := range ps {
		for {
			rec, _ := runtime.ReadRecord(filepath.Join(p.RunDir, "runtime.json"))
			if rec != nil && rec.TerminalDisposition == runtime.Running {
				recs = append(recs, rec)
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("run %s never ran: %+v", p.RunID, rec)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return recs
}

// profileWindow writes a CPU profile of the measured window alone to
// -idleprof, when set (-cpuprofile would include starting the runs).
func profileWindow(b *testing.B) (stop func()) {
	if *idleProf == "" {
		return func() {}
	}
	f, err := os.Create(*idleProf)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// waitFinished waits until every run's record is terminal.
func waitFinished(b *testing.B, ps []*runtime.Payload) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, p := range ps {
		for {
			rec, _ := runtime.ReadRecord(filepath.Join(p.RunDir, "runtime.json"))
			if rec != nil && rec.FinishedAt != nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("run %s never finished: %+v", p.RunID, rec)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

type cpu struct{ self, children time.Duration }

func usage() cpu {
	get := func(who int) time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(who, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return cpu{get(syscall.RUSAGE_SELF), get(syscall.RUSAGE_CHILDREN)}
}

func pct(used, wall time.Duration) float64 { return 100 * used.Seconds() / wall.Seconds() }

// rssKiB returns VmRSS of each run's runner and agent.
func rssKiB(recs []*runtime.Record) (runner, agent []int) {
	for _, r := range recs {
		runner = append(runner, vmRSS(r.RunnerPid))
		agent = append(agent, vmRSS(r.ExecutorPid))
	}
	return runner, agent
}

func vmRSS(pid int) int {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.Fields(v)[0])
			return n
		}
	}
	return 0
}

func mean(xs []int) float64 {
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return float64(sum) / float64(len(xs))
}
