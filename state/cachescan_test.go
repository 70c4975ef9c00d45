package state

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// The cache's own reader of agents and run facts lines reads what
// encoding/json reads, whatever the text in them, and takes the plain
// lines without encoding/json.
func TestTheCacheLineReaderReadsWhatEncodingJSONReads(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "plain", `q"uote`, `back\slash`, "tab\tnew\nline", "<&>", "ünï\u2028cöde", "\x00nul", "bad\xffutf8", "/s/waves/0/runs/A1-a1", "./rel"}
	text := func() string { return texts[r.IntN(len(texts))] + texts[r.IntN(len(texts))] }
	when := func() *time.Time {
		if r.IntN(3) == 0 {
			return nil
		}
		t := time.Date(2026, 3, 1, 12, r.IntN(60), r.IntN(60), r.IntN(1e9), time.UTC)
		if r.IntN(4) == 0 {
			t = t.In(time.FixedZone("", 3600*(r.IntN(5)-2)))
		}
		return &t
	}
	num := func() *int {
		if r.IntN(2) == 0 {
			return nil
		}
		n := r.IntN(300) - 150
		return &n
	}
	use := func() *usage.Usage {
		if r.IntN(3) != 0 {
			return nil
		}
		n, c, m := int64(r.IntN(1e6)), r.Float64(), text()
		return &usage.Usage{InputTokens: &n, CostUSD: &c, Model: &m}
	}
	for round := range 300 {
		var as []cachedAgent
		runs := map[string]CachedRun{}
		for range 1 + r.IntN(5) {
			var hb *int64
			if r.IntN(2) == 0 {
				v := int64(r.IntN(1e6))
				hb = &v
			}
			as = append(as, cachedAgent{ID: text(), Title: text(), Role: text(), Executor: text(), State: text(),
				Attempt: r.IntN(4), StartedAt: when(), FinishedAt: when(), ExitCode: num(), Signal: text(),
				HeartbeatAgeMs: hb, OutputAgeMs: hb, SessionName: text(), Backend: text(), Pod: text(),
				RunDir: text(), LogPath: text(), LastMarker: text(), StatusCode: text(), Detail: text(), Usage: use()})
			var warn []string
			for range r.IntN(3) {
				warn = append(warn, text())
			}
			runs[text()+fmt.Sprint(r.IntN(1000))] = CachedRun{
				Files: []FileKey{{Name: text(), Size: int64(r.IntN(1e6)), ModNs: r.Int64(), Inode: r.Uint64() >> 1}, {Name: "agent.log", Missing: true}},
				Facts: RunFacts{Disposition: text(), ExitCode: num(), Signal: text(), StartedAt: when(), FinishedAt: when(),
					LastHeartbeatAt: when(), LastOutputAt: when(), Lost: r.IntN(2) == 0, Reason: text(), Warnings: warn,
					LastMarker: text(), Err: text(), Backend: text(), Pod: text(), AgentID: text(), Executor: text(), Usage: use()}}
		}
		for _, line := range []cacheLine{{Agents: as}, {Runs: runs}} {
			b, err := json.Marshal(line)
			if err != nil {
				t.Fatal(err)
			}
			var want, got cacheLine
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if err := decodeLine(b, &got); err != nil {
				t.Fatalf("round %d: %v\n%s", round, err, b)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d: read\n%+v\nencoding/json reads\n%+v\nfrom %s", round, got, want, b)
			}
			s := scanner{b: b, i: len(`{"a":`)}
			if _, err = s.agents(); line.Agents == nil {
				_, err = s.runs()
			}
			if err != nil || !s.end() {
				t.Fatalf("round %d: the line went to encoding/json (%v): %s", round, err, b)
			}
		}
	}
	plain := []byte(`{"a":[{"id":"A1","st":"completed","at":1,"sa":"2026-03-01T12:00:00Z","ec":0,"rd":"waves/0/runs/A1-a1"}]}`)
	s := scanner{b: plain, i: len(`{"a":`)}
	if _, err := s.agents(); err != nil || !s.end() {
		t.Errorf("a plain agents line goes to encoding/json: %v", err)
	}
	plain = []byte(`{"r":{"waves/0/runs/A1-a1":{"f":["runtime.json|9|8|7","agent.log|-"],"r":{"d":"completed","ec":0,"sa":"2026-03-01T12:00:00Z","lo":true,"wa":["x"]}}}}`)
	s = scanner{b: plain, i: len(`{"r":`)}
	if _, err := s.runs(); err != nil || !s.end() {
		t.Errorf("a plain runs line goes to encoding/json: %v", err)
	}
}

// The head, wave and logged runs lines are read through a narrower type
// than cacheLine, and give what encoding/json gives for the whole
// cacheLine; a line with any key that type lacks goes to encoding/json
// whole, so nothing in it is dropped.
func TestNarrowLinesReadWhatTheWholeLineReads(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 5, time.FixedZone("", 3600))
	n := int64(7)
	fold := &Fold{
		WaveStates: []Wave{{Wave: 2, File: "w2.md", Status: WaveRunning, StartedAt: &at,
			Closure:    []Stage{{Phase: "integrating", State: StagePassed, Agents: []string{"A8"}}},
			Agents:     []Agent{{ID: "A1", State: AgentCompleted, RunDir: "/s/waves/2/runs/A1-a1"}},
			Questions:  []Question{{ID: "q1", Text: `a "question"`, AskedAt: &at}},
			LastEvents: []EventRef{{At: at, Wave: 2, Message: "A1 started"}}}},
		Started: []int{0},
		Logged:  []LoggedRun{{RunDir: "/s/waves/2/runs/A1-a1", Usage: &usage.Usage{InputTokens: &n}, Started: true}},
		Open:    map[string]bool{"q1": true},
		Notices: &noticeFold{State: map[string]string{"n1/log": "delivered"}},
	}
	c := &Cache{Version: CacheVersion, Program: "p", Fold: fold, Bad: []string{"x:1"},
		Log: LogPlace{Current: FileKey{Name: "/s/events.jsonl", Size: 9, ModNs: 8, Inode: 7}, Lines: 3, TailSum: "ab"}}
	lines := encodeCache(c, "/s/")
	extra := []string{
		`{"h":{"version":1,"program":"p","log":{"rotated":"a|-","current":"b|-","lines":0,"tailSum":""},"bad":null,"fold":{"waves":null}},"r":{"waves/0/runs/A1-a1":{"f":["agent.log|-"],"r":{}}}}`,
		`{"w":{"wave":0,"status":"running","agents":[],"later":1}}`,
		`{"l":[{"runDir":"waves/0/runs/A1-a1","started":true}],"a":[{"id":"A1"}]}`,
	}
	var all [][]byte
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b)
	}
	narrow := len(all)
	for _, s := range extra {
		all = append(all, []byte(s))
	}
	for i, b := range all {
		var want, got cacheLine
		werr := json.Unmarshal(b, &want)
		gerr := decodeLine(b, &got)
		if (werr != nil) != (gerr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("line %d: read %+v (%v), encoding/json reads %+v (%v), from %s", i, got, gerr, want, werr, b)
		}
		if i < narrow && (want.Agents != nil || want.Runs != nil) {
			continue // the scanner's lines
		}
		var l cacheLine
		if err := decodeNarrow(b, &l); (err == nil) != (i < narrow) {
			t.Errorf("line %d: the narrow read's error is %v: %s", i, err, b)
		}
	}
}
