package webui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sseReader reads a stream's events into a channel.
func sseReader(t *testing.T, body io.Reader) <-chan [2]string {
	t.Helper()
	ch := make(chan [2]string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev != "":
				ch <- [2]string{ev, data}
				ev, data = "", ""
			}
		}
	}()
	return ch
}

// next waits for the stream's next event named name (others are
// skipped) and says how long it took.
func next(t *testing.T, ch <-chan [2]string, name string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended waiting for a %q event", name)
			}
			if ev[0] == name {
				return ev[1], time.Since(start)
			}
		case <-deadline:
			t.Fatalf("no %q event within 10s", name)
		}
	}
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := io.WriteString(fh, line); err != nil {
		t.Fatal(err)
	}
}

func TestEventStreamDeliversEachAppendedLine(t *testing.T) {
	f := newFixture(t)
	appendLine(t, f.layout.EventsPath(), `{"id":"old"}`+"\n") // before the server: not replayed
	o := f.options()
	o.Token = "tok"
	s := New(o)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/v1/events", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /api/v1/events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ch := sseReader(t, resp.Body)
	next(t, ch, "hello")
	// Subscribed before the follower starts: a log it found at start
	// must not be replayed.
	watched := make(chan error, 1)
	go func() { watched <- s.Watch(ctx) }()
	waitWatching(t, s)

	appendLine(t, f.layout.EventsPath(), `{"id":"e0"}`+"\n")
	if data, _ := next(t, ch, evLane); data != `{"id":"e0"}` {
		t.Fatalf("first lane event %s, want e0 (the line before the server started is not news)", data)
	}

	// A lane event, written in two pieces: one event, once complete. The
	// coordination line between them is seen after the first piece was
	// read (one watcher's events come in order), so the follower did see
	// the line incomplete.
	appendLine(t, f.layout.EventsPath(), `{"id":"e1","entityType":"agent_run",`)
	appendLine(t, f.layout.CoordinationPath(1), `{"id":"c0"}`+"\n")
	next(t, ch, evCoordination)
	appendLine(t, f.layout.EventsPath(), `"action":"started"}`+"\n")
	data, took := next(t, ch, evLane)
	if data != `{"id":"e1","entityType":"agent_run","action":"started"}` {
		t.Fatalf("lane event data %s", data)
	}
	t.Logf("lane event delivered %v after its append", took)

	// A backlog run that starts after the server did: followed from its
	// first line.
	appendLine(t, filepath.Join(f.layout.StateDir, "backlog", "20261201T000000Z-backlog-1", "events.jsonl"), `{"kind":"merged","issue":3}`+"\n")
	data, took = next(t, ch, evBacklog)
	var bl struct {
		Run   string         `json:"run"`
		Event map[string]any `json:"event"`
	}
	if err := json.Unmarshal([]byte(data), &bl); err != nil || bl.Run != "20261201T000000Z-backlog-1" || bl.Event["kind"] != "merged" {
		t.Fatalf("backlog event %s (%v)", data, err)
	}
	t.Logf("backlog event delivered %v after its append", took)

	// A question in a wave's coordination log; a corrupt line still
	// arrives, as a string.
	appendLine(t, f.layout.CoordinationPath(1), "{not json\n")
	data, _ = next(t, ch, evCoordination)
	if data != `{"wave":1,"record":"{not json"}` {
		t.Fatalf("coordination event %s", data)
	}
	cancel()
	if err := <-watched; err != nil {
		t.Fatalf("Watch: %v", err)
	}
}

// An agent that writes output without pause still gets its page
// updated: "change" comes while the writes go on, not only after.
func TestChangeEventsComeWhileOutputFlows(t *testing.T) {
	f := newFixture(t)
	s := New(f.options())
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ch := sseReader(t, resp.Body)
	next(t, ch, "hello")
	go func() { _ = s.Watch(ctx) }()
	waitWatching(t, s)
	log := f.lane.Waves[0].Agents[0].LogPath
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case ev := <-ch:
			if ev[0] == evChange {
				return
			}
		case <-tick.C:
			appendLine(t, log, "more output\n")
		case <-deadline:
			t.Fatal("no change event in 10s of output written every 20ms")
		}
	}
}

// waitWatching waits until the hub's first walk is done (the follower
// knows the lane's log), so a test's append is not taken for old.
func waitWatching(t *testing.T, s *Server) {
	t.Helper()
	select {
	case <-s.hub.ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the event follower did not start")
	}
}

func TestShutdownEndsOpenEventStreams(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- ListenAndServe(ctx, "127.0.0.1:0", f.options(), func(a net.Addr) { addr <- a.String() })
	}()
	base := "http://" + <-addr
	resp, err := http.Get(base + "/api/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	ch := sseReader(t, resp.Body)
	next(t, ch, "hello")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ListenAndServe after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return after its context ended with a stream open")
	}
	for range ch {
	} // the stream ends too
}
