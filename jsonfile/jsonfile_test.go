package jsonfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

type doc struct {
	N    int    `json:"n"`
	Body string `json:"body"`
}

func TestWriteIsAtomicAndLeavesNoTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	if err := Write(path, doc{N: 1, Body: "first"}); err != nil {
		t.Fatal(err)
	}
	if err := WriteVolatile(path, doc{N: 2, Body: "second"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "{\n  \"n\": 2,\n  \"body\": \"second\"\n}\n" {
		t.Fatalf("content %q, %v", b, err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, TmpDir)); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
	if err := Write(path, func() {}); err == nil {
		t.Fatal("encoding a func succeeded")
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Fatal("a failed write changed the file")
	}
}

func TestAppendConcurrentLinesNeverInterleave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				if err := Append(path, doc{N: w*1000 + i, Body: fmt.Sprintf("%0200d", i)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	got, bad, err := ReadLines[doc](path)
	if err != nil || len(bad) != 0 || len(got) != 1600 {
		t.Fatalf("read %d lines, bad %v, err %v", len(got), bad, err)
	}
}

func TestReadLinesReportsTornLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	body := "{\"n\":1}\n\n{\"n\":2,\"bo\n{\"n\":3}\n{\"n\":4"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, bad, err := ReadLines[doc](path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].N != 1 || got[1].N != 3 {
		t.Fatalf("got %+v", got)
	}
	if len(bad) != 2 || bad[0] != path+":3" || bad[1] != path+":5" {
		t.Fatalf("bad = %v", bad)
	}
	none, bad, err := ReadLines[doc](filepath.Join(t.TempDir(), "missing.jsonl"))
	if none != nil || bad != nil || err != nil {
		t.Fatalf("missing file: %v %v %v", none, bad, err)
	}
}

// A line torn by a crash must not swallow the next append: the append
// starts on a fresh line, so only the fragment is reported.
func TestAppendAfterTornLineStartsFreshLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte("{\"n\":1}\n{\"n\":2,\"bo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Append(path, doc{N: 3}); err != nil {
		t.Fatal(err)
	}
	got, bad, err := ReadLines[doc](path)
	if err != nil || len(got) != 2 || got[0].N != 1 || got[1].N != 3 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if len(bad) != 1 || bad[0] != path+":2" {
		t.Fatalf("bad = %v", bad)
	}
}

// A log written before appends started on a fresh line has values glued
// onto fragments; the reader reports the line and keeps the value.
func TestReadLinesKeepsValueGluedToFragment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	body := "{\"n\":1}\n{\"n\":2,\"body\":{\"x\":{\"n\":7}{\"n\":3,\"body\":\"{}\"}\n{\"n\":4}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, bad, err := ReadLines[doc](path)
	if err != nil || len(got) != 3 || got[1].N != 3 || got[1].Body != "{}" || got[2].N != 4 {
		t.Fatalf("got %+v, %v", got, err)
	}
	if len(bad) != 1 || bad[0] != path+":2" {
		t.Fatalf("bad = %v", bad)
	}
}

type nested struct {
	N    int            `json:"n"`
	Data map[string]int `json:"data,omitempty"`
}

// A line torn just before its closing brace ends in a whole nested
// object; that object is no record and must not be read as one.
func TestReadLinesIgnoresNestedObjectOfTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte("{\"n\":1,\"data\":{\"x\":5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, bad, err := ReadLines[nested](path)
	if err != nil || len(got) != 0 || len(bad) != 1 {
		t.Fatalf("got %+v bad %v err %v", got, bad, err)
	}
}
