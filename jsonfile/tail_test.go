package jsonfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// readTail reads t once and returns the N of the docs read.
func readTail(t *testing.T, tl *Tail[doc]) (ns []int, bad []string, reset bool) {
	t.Helper()
	vals, bad, reset, err := tl.Read()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		ns = append(ns, v.N)
	}
	return ns, bad, reset
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

func TestTailReturnsEachAppendedLineOnceAndWaitsForItsNewline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	tl := NewTail[doc](path)
	if ns, _, reset := readTail(t, tl); ns != nil || !reset {
		t.Fatalf("missing log: %v reset %v, want nothing and a reset (first read)", ns, reset)
	}
	for n := 1; n <= 2; n++ {
		if err := Append(path, doc{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	if ns, _, reset := readTail(t, tl); !slices.Equal(ns, []int{1, 2}) || !reset {
		t.Fatalf("first lines: %v reset %v, want [1 2] and a reset (the log appeared)", ns, reset)
	}
	appendRaw(t, path, `{"n":3}`+"\n"+`not json`+"\n"+`{"n":4,"bo`)
	ns, bad, reset := readTail(t, tl)
	if !slices.Equal(ns, []int{3}) || reset || !slices.Equal(bad, []string{path + ":4"}) {
		t.Fatalf("appended: %v bad %v reset %v, want [3], %s:4 bad, no reset", ns, bad, reset, path)
	}
	if ns, _, _ := readTail(t, tl); ns != nil {
		t.Fatalf("nothing new, read %v", ns)
	}
	appendRaw(t, path, `dy":"x"}`+"\n")
	if ns, _, reset := readTail(t, tl); !slices.Equal(ns, []int{4}) || reset {
		t.Fatalf("the line completed: %v reset %v, want [4] once", ns, reset)
	}
}

func TestTailRereadsALogTruncatedOrReplaced(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string)
		want   []int
	}{
		{"truncated", func(t *testing.T, path string) {
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
		}, []int{9}},
		{"rewritten in place past the old end", func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(fmt.Sprintf(`{"n":8,"body":"%0100d"}`+"\n", 0)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, []int{8, 9}},
		{"rotated away", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
		}, []int{9}},
		{"removed", func(t *testing.T, path string) { os.Remove(path) }, []int{9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.jsonl")
			for n := 1; n <= 3; n++ {
				if err := Append(path, doc{N: n}); err != nil {
					t.Fatal(err)
				}
			}
			tl := NewTail[doc](path)
			if ns, _, _ := readTail(t, tl); len(ns) != 3 {
				t.Fatalf("read %v", ns)
			}
			tc.change(t, path)
			if err := Append(path, doc{N: 9, Body: "a longer line than any before it, past the old offset"}); err != nil {
				t.Fatal(err)
			}
			if ns, _, reset := readTail(t, tl); !slices.Equal(ns, tc.want) || !reset {
				t.Fatalf("after the change: %v reset %v, want %v and a reset", ns, reset, tc.want)
			}
		})
	}
}
