package coalesce

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// recorder is a Run that keeps its batches and holds the first one
// until released.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	first   chan struct{} // closed: the first batch may end
	began   chan struct{} // closed when the first batch began
}

func newRecorder() *recorder {
	return &recorder{first: make(chan struct{}), began: make(chan struct{})}
}

func (r *recorder) run(_ context.Context, batch []string) []string {
	r.mu.Lock()
	r.batches = append(r.batches, slices.Clone(batch))
	n := len(r.batches)
	r.mu.Unlock()
	if n == 1 {
		close(r.began)
		<-r.first
	}
	out := make([]string, len(batch))
	for i, it := range batch {
		out[i] = "did " + it
	}
	return out
}

func byLetter(s string) string { return s[:1] }

// The calls made while a batch runs wait and go together in the next
// one, in the order they were made; a call made while none runs goes at
// once; with a key, equal keys never share a batch.
func TestCallsMadeWhileABatchRunsGoTogetherInTheNext(t *testing.T) {
	cases := []struct {
		name  string
		later []string
		key   func(string) string
		want  [][]string
	}{
		{"alone", nil, nil, [][]string{{"a1"}}},
		{"together", []string{"b1", "c1", "d1"}, nil, [][]string{{"a1"}, {"b1", "c1", "d1"}}},
		{"equal keys apart", []string{"b1", "b2", "c1", "b3"}, byLetter, [][]string{{"a1"}, {"b1", "c1"}, {"b2"}, {"b3"}}},
		{"a key free again", []string{"a2", "b1"}, byLetter, [][]string{{"a1"}, {"a2", "b1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			q := &Queue[string, string]{Run: rec.run, Key: tc.key}
			got := map[string]string{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			call := func(it string) {
				wg.Go(func() {
					res := q.Do(t.Context(), it)
					mu.Lock()
					got[it] = res
					mu.Unlock()
				})
			}
			call("a1")
			<-rec.began
			for i, it := range tc.later {
				call(it)
				waitFor(t, it+" waiting", func() bool { return q.Waiting() == i+1 })
			}
			close(rec.first)
			wg.Wait()
			if !slices.EqualFunc(rec.batches, tc.want, slices.Equal) {
				t.Fatalf("batches %v, want %v", rec.batches, tc.want)
			}
			for _, it := range append([]string{"a1"}, tc.later...) {
				if got[it] != "did "+it {
					t.Errorf("%s got %q, want its own result", it, got[it])
				}
			}
			if n := q.Waiting(); n != 0 {
				t.Errorf("%d calls left waiting", n)
			}
		})
	}
}

// Once the queue is idle again, the next call leads a batch of its own:
// no call is left behind by a leader that finished.
func TestACallAfterTheQueueWentIdleRunsAtOnce(t *testing.T) {
	var batches []string
	q := &Queue[string, int]{Run: func(_ context.Context, b []string) []int {
		batches = append(batches, strings.Join(b, ","))
		return []int{len(b)}
	}}
	for _, it := range []string{"x", "y", "z"} {
		if n := q.Do(t.Context(), it); n != 1 {
			t.Fatalf("%s ran in a batch of %d, want alone", it, n)
		}
	}
	if want := []string{"x", "y", "z"}; !slices.Equal(batches, want) {
		t.Fatalf("batches %v, want %v", batches, want)
	}
}
