package runtime

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Whatever the chunking, the capped log's tail read is exactly the end of
// what was written (no notice inside, no line cut), each segment holds
// whole lines, and the files stay within the cap.
func TestCappedLogTailIsTheStreamsEnd(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), logFile)
	l, err := openLog(path, MinLogCap)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	var stream []byte
	const tail = 256 << 10
	for i := 0; len(stream) < 6<<20; i++ {
		var chunk []byte
		for len(chunk) < rng.IntN(40<<10) {
			chunk = fmt.Appendf(chunk, "[wave-proof] line %d of chunk %d %s\n", len(chunk), i, strings.Repeat("x", rng.IntN(200)))
		}
		chunk = append(chunk, "partial "...) // lines span chunks too
		if _, err := l.Write(chunk); err != nil {
			t.Fatal(err)
		}
		stream = append(stream, chunk...)
		if i%25 != 0 {
			continue
		}
		got, err := ReadLogTail(path, tail)
		if err != nil {
			t.Fatal(err)
		}
		want := stream[max(0, len(stream)-tail):]
		if got != string(want) {
			t.Fatalf("after %d bytes: tail of %d bytes is not the stream's last %d", len(stream), len(got), len(want))
		}
	}
	var total int64
	for _, f := range []string{path, path + prevSuffix, path + headSuffix} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += int64(len(data))
		if f != path && !bytes.HasSuffix(data, []byte("\n")) {
			t.Errorf("%s ends mid-line", f)
		}
	}
	if total > MinLogCap+4<<10 {
		t.Errorf("logs hold %d bytes, cap %d", total, MinLogCap)
	}
	head, _ := os.ReadFile(path + headSuffix)
	if !bytes.HasPrefix(stream, head) {
		t.Error("agent.log.head is not the start of the output")
	}
}

// Without a cap the log is one file with everything.
func TestUncappedLogKeepsAll(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), logFile)
	l, err := openLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("y", 1023) + "\n")
	for range 3 << 10 {
		l.Write(line)
	}
	l.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() != 3<<20 {
		t.Fatalf("size %v, %v", fi, err)
	}
	if _, err := os.Stat(path + headSuffix); err == nil {
		t.Fatal("uncapped log rotated")
	}
}

// gatedPane is a pane that accepts nothing until released.
type gatedPane struct {
	release chan struct{}
	mu      sync.Mutex
	got     bytes.Buffer
}

func (p *gatedPane) Write(b []byte) (int, error) {
	<-p.release
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.got.Write(b)
}

// A pane that does not keep up never holds the agent back: the log gets
// every byte, the pane what fits (what it took before it stuck, and a full
// queue) and a note of what it missed.
func TestStuckPaneNeverBlocksTheAgent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), logFile)
	l, err := openLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pane := &gatedPane{release: make(chan struct{})}
	s := newSink(l, pane, time.Now, nil)
	chunk := bytes.Repeat([]byte("output line of a flooding agent\n"), 1024)
	const n = 256 // 8 MiB
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			s.agentOutput(chunk)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the agent's output is blocked by a stuck pane")
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != int64(n*len(chunk)) {
		t.Fatalf("log: %v %v, want %d bytes", fi, err, n*len(chunk))
	}
	close(pane.release)
	s.pane.close(10 * time.Second)
	pane.mu.Lock()
	defer pane.mu.Unlock()
	if got := pane.got.String(); !strings.Contains(got, "bytes of output are only in agent.log") || len(got) > 2*paneQueueBytes+200 {
		t.Fatalf("pane got %d bytes: %.200q", len(got), got)
	}
	if s.lastOutput().IsZero() {
		t.Fatal("last output time not kept")
	}
}
