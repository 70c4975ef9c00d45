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
