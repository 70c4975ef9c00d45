package dashboard

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// loadedLane writes a real events.jsonl for a wave with a completed, a
// running, a lost and a pending agent plus closure progress and a gate
// failure, then loads it through state.Load, as `status` does.
func loadedLane(t *testing.T) state.Lane {
	t.Helper()
	layout := lanes.New(t.TempDir(), ".wave", "demo", "main")
	start := clock.Add(-10 * time.Minute)
	n := 0
	add := func(entity, id, action string, attempt int, data any) {
		t.Helper()
		ev := state.NewEvent("main", 2, entity, id, action, attempt, state.Data(data))
		ev.RecordedAt = start.Add(time.Duration(n) * time.Second)
		n++
		if err := state.Append(layout.EventsPath(), ev); err != nil {
			t.Fatal(err)
		}
	}
	run := func(id string) state.AgentRunData {
		d := layout.RunDir(2, id, 1)
		return state.AgentRunData{AgentID: id, SessionName: lanes.SessionName(2, id), Executor: "claude",
			RunDir: d, LogPath: filepath.Join(d, lanes.LogFile)}
	}
	add(state.EntityWaveRun, "wave-2", "started", 0, state.WaveStarted{File: "docs/plans/waves/wave-2.md", MaxAttempts: 2,
		Agents: []state.AgentInfo{{ID: "A1", Title: "Parser", Role: "implementation", Executor: "claude"},
			{ID: "A2", Title: "Runner", Role: "implementation", Executor: "claude"},
			{ID: "A3", Title: "Docs", Role: "implementation", Executor: "codex"},
			{ID: "A0", Title: "cont-QA", Role: "cont-qa", Executor: "claude"}},
		Closure: []state.Stage{{Phase: "integrating", Agents: []string{"A8"}}, {Phase: "cont-qa-closure", Agents: []string{"A0"}}}})
	add(state.EntityAttempt, "wave-2-a1", "running", 1, map[string]any{"phase": "implementation"})
	for _, id := range []string{"A1", "A2", "A3"} {
		add(state.EntityAgentRun, id, "started", 1, run(id))
	}
	done := run("A1")
	zero := 0
	done.ExitCode = &zero
	add(state.EntityAgentRun, "A1", state.AgentCompleted, 1, done)
	add(state.EntityGate, "wave-2", "evaluated", 1, map[string]any{"phase": "implementation", "ok": false,
		"failures": []state.Failure{{AgentID: "A3", Gate: "implementationGate", StatusCode: "missing-status", Detail: "runner died", LogPath: run("A3").LogPath}}})
	add(state.EntityClosure, "integrating", state.StageSkipped, 1, map[string]any{"phase": "integrating", "detail": "no A8 declared"})

	hb := clock.Add(-1500 * time.Millisecond)
	started := start
	observe := func(dir string) state.RunFacts {
		switch dir {
		case run("A2").RunDir:
			return state.RunFacts{RunDir: dir, Disposition: "running", StartedAt: &started, LastHeartbeatAt: &hb, LastMarker: "[wave-phase] coding"}
		case run("A3").RunDir:
			return state.RunFacts{RunDir: dir, Disposition: "running", Lost: true}
		}
		return state.RunFacts{RunDir: dir, Disposition: "completed", ExitCode: &zero}
	}
	blockers := func(int) []state.Blocker {
		return []state.Blocker{{ID: "b-1", Kind: "blocker", AgentID: "A2", Summary: "waiting on A1's schema"}}
	}
	l, err := state.Load(layout, observe, blockers, clock)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// kinds of JSON values a field may hold.
const (
	kString = "string"
	kNumber = "number"
	kBool   = "bool"
	kArray  = "array"
	kObject = "object"
	kNull   = "null"
)

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return kString
	case float64:
		return kNumber
	case bool:
		return kBool
	case []any:
		return kArray
	case map[string]any:
		return kObject
	}
	return kNull
}

type schema map[string][]string

var (
	laneSchema = schema{"schemaVersion": {kNumber}, "lane": {kString}, "socket": {kString}, "launcher": {kObject, kNull},
		"waves": {kArray}, "problems": {kArray}, "generatedAt": {kString}, "lastEvents": {kArray},
		"notifications": {kObject, kNull}, "usage": {kObject, kNull}}
	waveSchema = schema{"wave": {kNumber}, "file": {kString}, "status": {kString}, "phase": {kString},
		"attempt": {kNumber}, "maxAttempts": {kNumber}, "startedAt": {kString, kNull}, "finishedAt": {kString, kNull},
		"updatedAt": {kString, kNull}, "closure": {kArray}, "agents": {kArray}, "failures": {kArray},
		"blockers": {kArray}, "questions": {kArray}, "lastEvents": {kArray}, "usage": {kObject, kNull}}
	stageSchema = schema{"phase": {kString}, "state": {kString}, "agents": {kArray}, "detail": {kString}}
	agentSchema = schema{"id": {kString}, "title": {kString}, "role": {kString}, "executor": {kString},
		"state": {kString}, "attempt": {kNumber}, "startedAt": {kString, kNull}, "finishedAt": {kString, kNull},
		"exitCode": {kNumber, kNull}, "signal": {kString}, "heartbeatAgeMs": {kNumber, kNull}, "outputAgeMs": {kNumber, kNull},
		"sessionName": {kString}, "runDir": {kString}, "logPath": {kString}, "lastMarker": {kString},
		"statusCode": {kString}, "detail": {kString}, "usage": {kObject, kNull}}
	failureSchema  = schema{"agentId": {kString}, "gate": {kString}, "statusCode": {kString}, "detail": {kString}, "logPath": {kString}}
	blockerSchema  = schema{"id": {kString}, "kind": {kString}, "agentId": {kString}, "summary": {kString}}
	eventSchema    = schema{"at": {kString}, "wave": {kNumber}, "message": {kString}}
	launcherSchema = schema{"pid": {kNumber}, "alive": {kBool}, "startedAt": {kString}}
)

// check asserts obj has exactly the schema's keys with allowed kinds.
func check(t *testing.T, where string, obj any, s schema) map[string]any {
	t.Helper()
	m, ok := obj.(map[string]any)
	if !ok {
		t.Fatalf("%s: %T, want an object", where, obj)
	}
	for k, kinds := range s {
		v, present := m[k]
		if !present {
			t.Errorf("%s: key %q missing", where, k)
			continue
		}
		if got := kindOf(v); !contains(kinds, got) {
			t.Errorf("%s.%s is %s, want one of %v", where, k, got, kinds)
		}
	}
	for k := range m {
		if _, known := s[k]; !known {
			t.Errorf("%s: undocumented key %q (add it to docs/status-schema.md and this test)", where, k)
		}
	}
	return m
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func each(t *testing.T, where string, v any, s schema) []map[string]any {
	t.Helper()
	arr, _ := v.([]any)
	if len(arr) == 0 {
		t.Fatalf("%s: empty; the fixture should fill it", where)
	}
	out := make([]map[string]any, len(arr))
	for i, x := range arr {
		out[i] = check(t, where, x, s)
	}
	return out
}

func TestStatusJSONSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteStatusJSON(&buf, loadedLane(t), -1); err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("status --json is not JSON: %v\n%s", err, buf.String())
	}
	lane := check(t, "lane", doc, laneSchema)
	if lane["schemaVersion"] != float64(state.SchemaVersion) {
		t.Errorf("schemaVersion = %v", lane["schemaVersion"])
	}
	each(t, "lane.lastEvents[]", lane["lastEvents"], eventSchema)
	waves := each(t, "waves[]", lane["waves"], waveSchema)
	w := waves[0]
	each(t, "waves[].closure[]", w["closure"], stageSchema)
	each(t, "waves[].failures[]", w["failures"], failureSchema)
	each(t, "waves[].blockers[]", w["blockers"], blockerSchema)
	each(t, "waves[].lastEvents[]", w["lastEvents"], eventSchema)
	states := map[string]string{}
	for _, a := range each(t, "waves[].agents[]", w["agents"], agentSchema) {
		states[a["id"].(string)] = a["state"].(string)
		if a["state"] == state.AgentRunning && kindOf(a["heartbeatAgeMs"]) != kNumber {
			t.Errorf("running agent %v has no heartbeatAgeMs", a["id"])
		}
	}
	want := map[string]string{"A1": "completed", "A2": "running", "A3": "lost", "A0": "pending"}
	for id, s := range want {
		if states[id] != s {
			t.Errorf("agent %s state %q, want %q", id, states[id], s)
		}
	}

	// A lane with nothing yet still has arrays, never null.
	buf.Reset()
	if err := WriteStatusJSON(&buf, state.Lane{Lane: "main", Waves: []state.Wave{{Wave: 0}}}, -1); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	empty := check(t, "empty lane", doc, laneSchema)
	check(t, "empty wave", empty["waves"].([]any)[0], waveSchema)
}

func TestStatusJSONWaveFilter(t *testing.T) {
	l := failedLane()
	l.Waves = append([]state.Wave{closureLane().Waves[0]}, l.Waves...)
	l.Waves[0].Wave = 2
	l.LastEvents = append(append([]state.EventRef{}, l.Waves[0].LastEvents...), l.Waves[1].LastEvents...)
	got := StatusJSON(l, 3)
	if len(got.Waves) != 1 || got.Waves[0].Wave != 3 {
		t.Fatalf("--wave 3 gave waves %+v", got.Waves)
	}
	for _, e := range got.LastEvents {
		if e.Wave != 3 {
			t.Errorf("--wave 3 kept an event of wave %d", e.Wave)
		}
	}
	if got := StatusJSON(l, 7); got.Waves == nil || len(got.Waves) != 0 {
		t.Errorf("unknown wave: %+v, want an empty array", got.Waves)
	}
	if len(l.Waves) != 2 {
		t.Errorf("StatusJSON modified its input")
	}
}

// Every key the JSON can hold is documented in docs/status-schema.md.
func TestStatusSchemaDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "status-schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, s := range []schema{laneSchema, waveSchema, stageSchema, agentSchema, failureSchema, blockerSchema, eventSchema, launcherSchema} {
		for k := range s {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/status-schema.md does not document `%s`", k)
		}
	}
}

// status (text) and the dashboard frame draw the same agent states from
// the same lane state, row for row.
func TestStatusAndDashboardAgree(t *testing.T) {
	for name, l := range map[string]state.Lane{"loaded": loadedLane(t), "running": runningLane(),
		"closure": closureLane(), "failed": failedLane()} {
		t.Run(name, func(t *testing.T) {
			w := l.Waves[len(l.Waves)-1]
			for _, width := range []int{80, 160} {
				o := Options{Width: width, Now: clock, Wave: -1, Selected: -1}
				frame := agentStates(Render(l, o))
				status := agentStates(RenderStatus(l, o))
				for _, a := range w.Agents {
					if frame[a.ID] != a.State || status[a.ID] != a.State {
						t.Errorf("width %d agent %s: state %q, dashboard shows %q, status shows %q",
							width, a.ID, a.State, frame[a.ID], status[a.ID])
					}
				}
			}
		})
	}
}

// agentStates reads the agent table rows of a rendered view.
func agentStates(view string) map[string]string {
	out := map[string]string{}
	in := false
	for _, line := range strings.Split(view, "\n") {
		f := strings.Fields(strings.TrimPrefix(line, "›"))
		switch {
		case len(f) >= 2 && f[0] == "ID" && f[1] == "STATE":
			in = true
		case len(f) == 0:
			in = false
		case in && len(f) >= 2:
			out[f[0]] = f[1]
		}
	}
	return out
}

// For a wave that has not run, the dashboard and status say the same and
// show no other wave's events.
func TestStatusAndDashboardAgreeOnAWaveNotRun(t *testing.T) {
	l := runningLane()
	o := Options{Width: 120, Now: clock, Wave: 57, Selected: -1}
	for name, view := range map[string]string{"dashboard": Render(l, o), "status": RenderStatus(l, o)} {
		if !strings.Contains(view, "wave 57 has not run on this lane") {
			t.Errorf("%s:\n%s", name, view)
		}
		for _, ev := range l.LastEvents {
			if strings.Contains(view, ev.Message) {
				t.Errorf("%s shows another wave's event %q", name, ev.Message)
			}
		}
	}
}
