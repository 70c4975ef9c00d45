package logtail

import (
	"os"
	"path/filepath"
	"testing"
)

// Lines appended across a rotation are each read once, in order: the
// rest of the rotated file first, then the new one from its start; a
// torn last line waits for its newline.
func TestEveryLineIsReadOnceAcrossARotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	appendTo := func(p, s string) {
		t.Helper()
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	tail := &Tail{Path: path, Rotates: true}
	var got []string
	read := func(lines [][]byte, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			got = append(got, string(l))
		}
	}
	read(tail.ReadAll()) // no log yet
	appendTo(path, "a\n")
	tail.Pin()
	appendTo(path, "b\n\nc")
	read(tail.ReadNew())
	appendTo(path, "\n")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(path, "d\n")
	read(tail.ReadNew())
	read(tail.ReadNew())
	want := []string{"a", "b", "c", "d"}
	if len(got) != len(want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("read %q, want %q", got, want)
		}
	}
}
