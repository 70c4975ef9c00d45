package telemetry

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
	"github.com/wave-orchestrator/wave-orchestrator/telemetry/otlptest"
)

func TestNoEndpointNoFollower(t *testing.T) {
	l := lanes.New(t.TempDir(), ".wave", "", "main")
	setEnv(t)
	if f := FollowLane(l, "main", Options{}); f != nil {
		t.Fatal("a follower without OTEL_EXPORTER_OTLP_* set")
	}
	var f *Follower
	f.Stop(time.Second) // a nil follower stops as nothing
}

// A launcher killed mid-wave leaves its wave span open; the next one ends
// it under the id the finished agent's span already names as parent,
// and nothing is sent twice.
func TestARestartedLauncherEndsTheWaveSpanItsPredecessorOpened(t *testing.T) {
	rcv := otlptest.New(t)
	l := lanes.New(t.TempDir(), ".wave", "", "main")
	if err := jsonfile.MkdirAll(filepath.Dir(l.EventsPath())); err != nil {
		t.Fatal(err)
	}
	emit := func(entity, action string, data map[string]any) {
		t.Helper()
		if err := state.Append(l.EventsPath(), state.NewEvent("main", 0, entity, "wave-0", action, 1, data)); err != nil {
			t.Fatal(err)
		}
	}
	setEnv(t, "OTEL_EXPORTER_OTLP_ENDPOINT", rcv.Srv.URL)
	o := Options{}
	a1 := map[string]any{"agentId": "A1", "runDir": filepath.Join(l.StateDir, "waves/0/runs/A1-a1"), "executorId": "local"}
	emit(state.EntityWaveRun, "started", nil)
	emit(state.EntityAgentRun, "started", a1)
	first := FollowLane(l, "main", o)
	emit(state.EntityAgentRun, state.AgentCompleted, a1)
	first.Stop(5 * time.Second)

	second := FollowLane(l, "main", o)
	emit(state.EntityWaveRun, state.WaveCompleted, nil)
	second.Stop(5 * time.Second)

	spans := rcv.Spans()
	waves, agents := otlptest.Named(spans, SpanWave), otlptest.Named(spans, SpanAgent)
	if len(waves) != 1 || len(agents) != 1 {
		t.Fatalf("received %d wave and %d agent spans, want one each: %+v", len(waves), len(agents), spans)
	}
	if agents[0].Parent != waves[0].SpanID || agents[0].TraceID != waves[0].TraceID {
		t.Errorf("agent span under %s/%s, the wave span is %s/%s", agents[0].TraceID, agents[0].Parent, waves[0].TraceID, waves[0].SpanID)
	}
	if agents[0].Attrs["wave.agent"] != "A1" || agents[0].Attrs["wave.executor"] != "local" || agents[0].Attrs["wave.run_id"] != "w0-A1-a1" {
		t.Errorf("agent span attributes %v", agents[0].Attrs)
	}
	pts := rcv.Points()
	if p, ok := otlptest.Last(pts, MetricRuns, map[string]any{"wave.outcome": "completed"}); !ok || p.Value != 1 {
		t.Errorf("%s completed = %+v (%v), want 1", MetricRuns, p, ok)
	}
	if p, ok := otlptest.Last(pts, MetricWaves, map[string]any{"wave.outcome": "completed"}); !ok || p.Value != 1 {
		t.Errorf("%s completed = %+v (%v), want 1", MetricWaves, p, ok)
	}
	if _, err := os.Stat(l.EventsPath()); err != nil {
		t.Fatal(err)
	}
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc sends the same spans and metrics to a
// collector's OTLP/gRPC port.
func TestAGRPCCollectorGetsTheWavesSpansAndMetrics(t *testing.T) {
	rcv := otlptest.NewGRPC(t)
	setEnv(t, pairs(rcv.Env())...)
	l := lanes.New(t.TempDir(), ".wave", "", "main")
	if err := jsonfile.MkdirAll(filepath.Dir(l.EventsPath())); err != nil {
		t.Fatal(err)
	}
	f := FollowLane(l, "main", Options{})
	if f == nil {
		t.Fatal("no follower for an OTLP/gRPC endpoint")
	}
	a1 := map[string]any{"agentId": "A1", "runDir": filepath.Join(l.StateDir, "waves/0/runs/A1-a1"), "executorId": "local"}
	for _, e := range []struct {
		entity, action string
		data           map[string]any
	}{
		{state.EntityWaveRun, "started", nil}, {state.EntityAgentRun, "started", a1},
		{state.EntityAgentRun, state.AgentCompleted, a1}, {state.EntityWaveRun, state.WaveCompleted, nil},
	} {
		if err := state.Append(l.EventsPath(), state.NewEvent("main", 0, e.entity, "wave-0", e.action, 1, e.data)); err != nil {
			t.Fatal(err)
		}
	}
	f.Stop(5 * time.Second)
	spans := rcv.Spans()
	waves, agents := otlptest.Named(spans, SpanWave), otlptest.Named(spans, SpanAgent)
	if len(waves) != 1 || len(agents) != 1 || agents[0].Parent != waves[0].SpanID {
		t.Fatalf("received %d wave and %d agent spans, want one agent under one wave: %+v", len(waves), len(agents), spans)
	}
	if p, ok := otlptest.Last(rcv.Points(), MetricRuns, map[string]any{"wave.outcome": "completed", "wave.executor": "local"}); !ok || p.Value != 1 {
		t.Errorf("%s completed = %+v (%v), want 1", MetricRuns, p, ok)
	}
}
