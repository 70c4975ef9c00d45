package tmpbench

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"github.com/wave-orchestrator/wave-orchestrator/dashboard"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/launcher"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

func load(b *testing.B) (state.Cache, []byte) {
	raw, err := os.ReadFile("/tmp/wbs.lcqe3U/repo/.wave/lanes/main/cache/status.v1.json")
	if err != nil {
		b.Fatal(err)
	}
	var c state.Cache
	if err := json.Unmarshal(raw, &c); err != nil {
		b.Fatal(err)
	}
	return c, raw
}

func BenchmarkJSONIndented(b *testing.B) {
	_, raw := load(b)
	for b.Loop() {
		var c state.Cache
		json.Unmarshal(raw, &c)
	}
}
func BenchmarkJSONCompact(b *testing.B) {
	c, _ := load(b)
	raw, _ := json.Marshal(c)
	b.Log(len(raw))
	for b.Loop() {
		var c state.Cache
		json.Unmarshal(raw, &c)
	}
}
func BenchmarkGob(b *testing.B) {
	c, _ := load(b)
	var buf bytes.Buffer
	gob.NewEncoder(&buf).Encode(c)
	raw := buf.Bytes()
	b.Log(len(raw))
	for b.Loop() {
		var c state.Cache
		gob.NewDecoder(bytes.NewReader(raw)).Decode(&c)
	}
}

func BenchmarkStatus(b *testing.B) {
	layout := lanes.New("/tmp/wbs.lcqe3U/repo", ".wave", "repo", "main")
	c0 := cpuNs()
	for b.Loop() {
		if _, err := launcher.Status(context.Background(), layout); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuNs()-c0)/float64(b.N)/1e6, "cpu-ms/op")
}

func BenchmarkStatusJSON(b *testing.B) {
	layout := lanes.New("/tmp/wbs.lcqe3U/repo", ".wave", "repo", "main")
	l, _ := launcher.Status(context.Background(), layout)
	for b.Loop() {
		dashboard.WriteStatusJSON(io.Discard, l, -1)
	}
}

func BenchmarkParts(b *testing.B) {
	raw, _ := os.ReadFile("/tmp/wbs.lcqe3U/repo/.wave/lanes/main/cache/status.v1.json")
	var parts map[string]json.RawMessage
	json.Unmarshal(raw, &parts)
	var fold map[string]json.RawMessage
	json.Unmarshal(parts["fold"], &fold)
	b.Run("waves", func(b *testing.B) {
		b.Log(len(fold["waves"]))
		for b.Loop() {
			var w []state.Wave
			json.Unmarshal(fold["waves"], &w)
		}
	})
	b.Run("runs", func(b *testing.B) {
		b.Log(len(parts["runs"]))
		for b.Loop() {
			var w map[string]state.CachedRun
			json.Unmarshal(parts["runs"], &w)
		}
	})
	b.Run("valid", func(b *testing.B) {
		for b.Loop() {
			json.Valid(raw)
		}
	})
}

func cpuNs() int64 {
	var r syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return r.Utime.Nano() + r.Stime.Nano()
}
