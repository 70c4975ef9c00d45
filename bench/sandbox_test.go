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
	"github.com/wave-orchestrator/wave-orchestrator/sandbox"
)

// BenchmarkSandboxStart is what the sandbox adds to a worker's start:
// `agent-run` started directly (as in RunnerCPU) 20 times, one at a
// time, with an agent that stamps the time as its first act into its
// checkout, once plain and once sandboxed (the trampoline, bwrap, the
// shim, the proxy the runner serves). start-p50-ms and start-min-ms are
// start → agent started; the sandbox's cost per worker is the
// difference of the two modes (cpu-p50-ms is the steadier figure on a
// loaded machine).
func BenchmarkSandboxStart(b *testing.B) {
	bwrap, err := sandbox.Usable(context.Background())
	if err != nil {
		b.Skip(err)
	}
	stamper := buildStamper(b)
	for _, mode := range []string{"plain", "sandboxed"} {
		b.Run(mode, func(b *testing.B) {
			root := b.TempDir()
			for i := 0; b.Loop(); i++ {
				var cpus, lat []time.Duration
				for j := range 20 {
					id := fmt.Sprintf("X%d-%d", i, j)
					wt := filepath.Join(root, id+"-wt")
					if err := os.MkdirAll(wt, 0o755); err != nil {
						b.Fatal(err)
					}
					stamp := filepath.Join(wt, "agent.stamp")
					p := (&lane{root: root}).payload(id, stamper, "stamp", stamp)
					p.Cwd = wt
					if mode == "sandboxed" {
						p.Sandbox = &runtime.Sandbox{Bwrap: bwrap, GitWritable: true, AllowHosts: []string{"api.example.com:443"}}
					}
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
					agent, err := readStamp(stamp)
					if err != nil {
						log, _ := os.ReadFile(p.LogPath)
						b.Fatalf("%v\n%s", err, log)
					}
					lat = append(lat, agent.Sub(start))
				}
				slices.Sort(cpus)
				slices.Sort(lat)
				b.ReportMetric(ms(cpus[len(cpus)/2]), "cpu-p50-ms")
				b.ReportMetric(ms(lat[len(lat)/2]), "start-p50-ms")
				// The least of 20 is the cost on an idle machine: on a
				// loaded one the p50 waits for the CPU.
				b.ReportMetric(ms(lat[0]), "start-min-ms")
			}
		})
	}
}
