package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// stamperSrc is a tiny program with two modes: `exec STAMP PROG ARGS...`
// writes the time (Unix ns) to STAMP and execs PROG in its place (the
// runner, so the stamp is when the runner's exec began); `stamp FILE` is
// an agent that writes the time to FILE as its first act.
const stamperSrc = `package main

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

func main() {
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	switch os.Args[1] {
	case "stamp":
		os.WriteFile(os.Args[2], []byte(now), 0o644)
	case "exec":
		os.WriteFile(os.Args[2], []byte(now), 0o644)
		syscall.Exec(os.Args[3], os.Args[3:], os.Environ())
		os.Exit(127)
	}
}
`

// BenchmarkRunnerStart is `agent-run` exec → agent started: the runner
// binary is exec'd (through a stamp-and-exec wrapper tmux runs in its
// place) and its agent writes the time as its first act. 20 runs, one at
// a time (each finished before the next) so they do not queue for the CPU
// behind each other; p50 and max
// are the figures.
func BenchmarkRunnerStart(b *testing.B) {
	stamper := buildStamper(b)
	l := newLane(b)
	wrapper := filepath.Join(b.TempDir(), "runner")
	script := fmt.Sprintf("#!/bin/sh\nd=$(dirname \"$3\")\nexec %q exec \"$d/exec.stamp\" %q \"$@\"\n", stamper, runnerBin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	be := runtime.NewTmuxBackend(l.tm, wrapper, discard())
	for i := 0; b.Loop(); i++ {
		var lat []time.Duration
		for j := range 20 {
			id := fmt.Sprintf("S%d-%d", i, j)
			p := l.payload(id, stamper, "stamp", filepath.Join(l.root, id+".agent"))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if err := be.Start(ctx, []*runtime.Payload{p}); err != nil {
				b.Fatal(err)
			}
			agent := waitStamp(b, ctx, filepath.Join(l.root, id+".agent"))
			cancel()
			waitFinished(b, []*runtime.Payload{p}) // the next run starts on an idle runner
			exec, err := readStamp(filepath.Join(p.RunDir, "exec.stamp"))
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, agent.Sub(exec))
		}
		l.tm.KillServer(context.Background())
		slices.Sort(lat)
		b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	}
}

func buildStamper(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(stamperSrc), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module stamper\n\ngo 1.22\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "stamper")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build stamper: %v\n%s", err, out)
	}
	return bin
}

// waitStamp waits for the agent's stamp file (written once, whole).
func waitStamp(b *testing.B, ctx context.Context, path string) time.Time {
	b.Helper()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if t, err := readStamp(path); err == nil {
			return t
		}
		select {
		case <-ctx.Done():
			b.Fatalf("no agent stamp %s: %v", path, ctx.Err())
		case <-tick.C:
		}
	}
}

// BenchmarkRunnerCPU is what one runner costs, without tmux: `agent-run`
// started directly (no pane; stdin and stdout /dev/null) 20 times, one
// at a time, with an agent that stamps the time as its first act. It
// reports the runner's CPU time (user+sys of the child, agent included,
// getrusage) and start → agent started (from just before the fork, so a
// fork more than RunnerStart). CPU time is the steadier figure on a
// loaded machine.
func BenchmarkRunnerCPU(b *testing.B) {
	stamper := buildStamper(b)
	root := b.TempDir()
	for i := 0; b.Loop(); i++ {
		var cpus, lat []time.Duration
		for j := range 20 {
			id := fmt.Sprintf("C%d-%d", i, j)
			p := (&lane{root: root}).payload(id, stamper, "stamp", filepath.Join(root, id+".agent"))
			p.FillPaths()
			if err := os.MkdirAll(p.RunDir, 0o755); err != nil {
				b.Fatal(err)
			}
			launch := filepath.Join(p.RunDir, "launch.json")
			if err := runtime.WriteJSON(launch, p); err != nil {
				b.Fatal(err)
			}
			before := usage().children
			start := time.Now()
			if out, err := exec.Command(runnerBin, "agent-run", "--payload", launch).CombinedOutput(); err != nil {
				b.Fatalf("agent-run %s: %v\n%s", id, err, out)
			}
			cpus = append(cpus, usage().children-before)
			agent, err := readStamp(filepath.Join(root, id+".agent"))
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, agent.Sub(start))
		}
		slices.Sort(cpus)
		slices.Sort(lat)
		b.ReportMetric(ms(cpus[len(cpus)/2]), "cpu-p50-ms")
		b.ReportMetric(ms(lat[len(lat)/2]), "start-p50-ms")
	}
}
