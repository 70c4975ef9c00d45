package state

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

func TestTheCacheResumesALogOnlyWhenItOnlyGrew(t *testing.T) {
	cur := FileKey{Name: "/l/events.jsonl", Size: 100, ModNs: 5, Inode: 7}
	none := FileKey{Name: "/l/events.jsonl.1", Missing: true}
	place := LogPlace{Rotated: none, Current: cur, Lines: 3}
	grown := cur
	grown.Size, grown.ModNs = 180, 9
	cases := []struct {
		name     string
		rot, cur FileKey
		want     bool
	}{
		{"unchanged", none, cur, true},
		{"appended to", none, grown, true},
		{"shorter", none, FileKey{Name: cur.Name, Size: 99, ModNs: 9, Inode: 7}, false},
		{"another file (replaced)", none, FileKey{Name: cur.Name, Size: 180, ModNs: 9, Inode: 8}, false},
		{"another path", none, FileKey{Name: "/m/events.jsonl", Size: 180, Inode: 7}, false},
		{"gone", none, FileKey{Name: cur.Name, Missing: true}, false},
		{"rotated since", FileKey{Name: none.Name, Size: 100, ModNs: 5, Inode: 7}, FileKey{Name: cur.Name, Size: 10, Inode: 9}, false},
	}
	for _, tc := range cases {
		if got := place.Continues(tc.rot, tc.cur); got != tc.want {
			t.Errorf("%s: Continues = %v, want %v", tc.name, got, tc.want)
		}
	}
	if (LogPlace{Current: FileKey{Name: cur.Name, Missing: true}, Rotated: none}).Continues(none, cur) {
		t.Error("a place in a log that did not exist continues into one")
	}
}

func TestTheTailHashTellsARewrittenLog(t *testing.T) {
	window := []byte(`{"id":"ctrl-a"}` + "\n")
	p := LogPlace{TailSum: TailSum(window)}
	if !p.TailMatches(window) {
		t.Error("the same bytes do not match")
	}
	if p.TailMatches([]byte(`{"id":"ctrl-b"}` + "\n")) {
		t.Error("other bytes match")
	}
	if WindowStart(100) != 0 || WindowStart(TailWindow+50) != 50 {
		t.Errorf("window starts %d, %d", WindowStart(100), WindowStart(TailWindow+50))
	}
}

func TestOnlyWholeLinesAreKept(t *testing.T) {
	cases := []struct{ in, complete, partial string }{
		{"", "", ""},
		{"a\n", "a\n", ""},
		{"a\nb", "a\n", "b"},
		{"a\nb\n\n", "a\nb\n\n", ""},
		{"half", "", "half"},
	}
	for _, tc := range cases {
		c, p := CompleteLines([]byte(tc.in))
		if string(c) != tc.complete || string(p) != tc.partial {
			t.Errorf("%q: %q + %q, want %q + %q", tc.in, c, p, tc.complete, tc.partial)
		}
	}
}

func TestAFinishedRunIsReusedOnlyWhileItsFilesAreUnchanged(t *testing.T) {
	rec := FileKey{Name: "runtime.json", Size: 900, ModNs: 1, Inode: 2}
	log := FileKey{Name: "agent.log", Size: 30, ModNs: 1, Inode: 3}
	r := CachedRun{Files: []FileKey{rec, log}}
	grown := log
	grown.Size = 31
	cases := []struct {
		name string
		now  []FileKey
		want bool
	}{
		{"unchanged", []FileKey{rec, log}, true},
		{"log grew", []FileKey{rec, grown}, false},
		{"record replaced", []FileKey{{Name: "runtime.json", Size: 900, ModNs: 1, Inode: 4}, log}, false},
		{"record gone", []FileKey{{Name: "runtime.json", Missing: true}, log}, false},
		{"fewer files", []FileKey{rec}, false},
	}
	for _, tc := range cases {
		if got := r.Fresh(tc.now); got != tc.want {
			t.Errorf("%s: Fresh = %v, want %v", tc.name, got, tc.want)
		}
	}
	if (CachedRun{}).Fresh(nil) {
		t.Error("a run with no files is fresh")
	}
}

// What a log folded in two goes, through the cache file in between, gives
// is what it gives folded at once.
func TestAFoldResumedFromTheCacheFileIsTheFoldOfTheWholeLog(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	code := 0
	var evs []Event
	add := func(wave int, entity, id, action string, data map[string]any) {
		ev := NewEvent("main", wave, entity, id, action, 1, data)
		at = at.Add(time.Second)
		ev.RecordedAt = at
		evs = append(evs, ev)
	}
	add(0, EntityWaveRun, "wave-0", "started", Data(WaveStarted{File: "w.md", MaxAttempts: 2,
		Agents:  []AgentInfo{{ID: "A1"}, {ID: "A2"}},
		Closure: []Stage{{Phase: "integrating", Agents: []string{}}}}))
	add(0, EntityAgentRun, "A1", "started", Data(AgentRunData{AgentID: "A1", RunDir: "/s/waves/0/runs/A1-a1"}))
	add(0, EntityQuestion, "q-1", QuestionAsked, Data(QuestionData{AgentID: "A1", Text: "why?", Blocking: true}))
	add(0, EntityQuestion, "q-1", QuestionUnanswered, nil)
	add(0, EntityNotification, "n-1", NotifyIntent, nil)
	u := int64(5)
	add(0, EntityAgentRun, "A1", AgentCompleted, Data(AgentRunData{AgentID: "A1", RunDir: "/s/waves/0/runs/A1-a1",
		ExitCode: &code, Usage: &usage.Usage{InputTokens: &u}}))
	add(0, EntityNotification, "n-1", NotifyFailed, Data(NotificationData{NoticeID: "n-1", Sink: "x", Error: "no"}))
	add(0, EntityAgentRun, "A2", "started", Data(AgentRunData{AgentID: "A2", RunDir: "/elsewhere/A2-a1"}))
	add(1, EntityWaveRun, "wave-1", "started", Data(WaveStarted{File: "w1.md"}))
	add(0, EntityClosure, "c", StageRunning, map[string]any{"phase": "integrating"})
	add(0, EntityWaveRun, "wave-0", WaveCompleted, nil)
	runs := map[string]RunFacts{"/s/waves/0/runs/A1-a1": {LastMarker: "[wave-phase] done", Disposition: AgentCompleted}}
	whole := FoldEvents(evs)
	for cut := range len(evs) + 1 {
		half := FoldEvents(evs[:cut])
		var lines []byte
		for _, l := range encodeCache(&Cache{Version: CacheVersion, Fold: half, Runs: map[string]CachedRun{}}, "/s/") {
			b, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(append(lines, b...), '\n')
		}
		c, err := decodeCache(lines, "/s/")
		if err != nil {
			t.Fatalf("cut %d: %v\n%s", cut, err, lines)
		}
		resumed := c.Fold
		for _, ev := range evs[cut:] {
			resumed.Apply(ev)
		}
		got, want := reduced(resumed, runs, at), reduced(whole, runs, at)
		if got != want {
			t.Fatalf("cut %d: resumed\n%s\nwhole\n%s", cut, got, want)
		}
	}
}

func reduced(f *Fold, runs map[string]RunFacts, now time.Time) string {
	b, _ := json.Marshal(map[string]any{"waves": f.Waves(runs, nil, now), "notices": f.Notifications(),
		"started": f.StartedRuns(), "logged": f.LoggedRuns(), "unanswered": f.UnansweredIDs()})
	return string(b)
}

func TestACacheFileOfAnotherVersionOrCutShortIsNotRead(t *testing.T) {
	good := `{"h":{"version":1,"log":{},"fold":{}}}` + "\n"
	if _, err := decodeCache([]byte(good), "/s/"); err != nil {
		t.Fatalf("a good cache: %v", err)
	}
	for _, bad := range []string{"", "{", good[:len(good)-1], strings.Replace(good, `"version":1`, `"version":2`, 1),
		`{"w":{}}` + "\n", good + `{"a":[{}]}` + "\n", good + "garbage\n"} {
		if _, err := decodeCache([]byte(bad), "/s/"); err == nil {
			t.Errorf("%q read as a cache", bad)
		}
	}
}

func TestPathsUnderTheStateDirRoundTrip(t *testing.T) {
	p := paths{"/s/"}
	for _, s := range []string{"/s/waves/0/runs/A1-a1", "/elsewhere", "", "rel", "/s/", "/s"} {
		if got := p.long(p.short(s)); got != s {
			t.Errorf("%q came back %q", s, got)
		}
	}
	if !reflect.DeepEqual(fromCached(toCached([]Agent{{ID: "A", RunDir: "/s/x", LogPath: "/y"}}, p), p),
		[]Agent{{ID: "A", RunDir: "/s/x", LogPath: "/y"}}) {
		t.Error("agents do not round-trip")
	}
}

func TestFileKeysRoundTripThroughTheCacheFile(t *testing.T) {
	for _, k := range []FileKey{{Name: "runtime.json", Size: 959, ModNs: 1796190906040914193, Inode: 10029209},
		{Name: "/a|b/events.jsonl", Size: 0, ModNs: -5, Inode: 1<<63 - 1}, {Name: "x|-", Missing: true}, {Name: "", Missing: true}} {
		b, err := json.Marshal(k)
		if err != nil {
			t.Fatal(err)
		}
		var got FileKey
		if err := json.Unmarshal(b, &got); err != nil || got != k {
			t.Errorf("%+v came back %+v (%v) from %s", k, got, err, b)
		}
	}
	for _, bad := range []string{`"runtime.json"`, `"a|1|2"`, `"a|1|2|x"`, `"|1|2|"`} {
		var k FileKey
		if json.Unmarshal([]byte(bad), &k) == nil {
			t.Errorf("%s read as a file key: %+v", bad, k)
		}
	}
}

func TestACacheIsReadOnlyByTheBuildThatWroteIt(t *testing.T) {
	ok := &Cache{Version: CacheVersion, Program: "/bin/w|1|2|3", Fold: &Fold{}}
	cases := []struct {
		name string
		c    *Cache
		want bool
	}{
		{"this build's", ok, true},
		{"none", nil, false},
		{"another version", &Cache{Version: CacheVersion + 1, Program: ok.Program, Fold: &Fold{}}, false},
		{"another build", &Cache{Version: CacheVersion, Program: "/bin/w|1|2|4", Fold: &Fold{}}, false},
		{"no fold", &Cache{Version: CacheVersion, Program: ok.Program}, false},
	}
	for _, tc := range cases {
		if got := tc.c.Usable(ok.Program); got != tc.want {
			t.Errorf("%s: Usable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
