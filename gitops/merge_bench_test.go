package gitops

import (
	"fmt"
	"testing"
)

// BenchmarkMergeClean times one clean merge (no verify) of a fresh worker
// branch into the wave branch on a bare origin: fetch, precheck,
// commit-tree, update-ref, push under lease, confirming fetch.
func BenchmarkMergeClean(b *testing.B) {
	_, r := newWave(b)
	start := r.Calls() // worker() runs git directly, not through r
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		name := fmt.Sprintf("wave/bench-i%d", i)
		worker(b, r, name, map[string]string{fmt.Sprintf("f%d.txt", i): "x"})
		b.StartTimer()
		res, err := r.Merge(b.Context(), MergeRequest{Wave: testWave, Worker: name, Message: "Merge #" + name})
		if err != nil || res.Already || res.Commit == "" {
			b.Fatalf("merge %d: %+v %v", i, res, err)
		}
	}
	b.ReportMetric(float64(r.Calls()-start)/float64(b.N), "gitcalls/op")
}
