package jsonfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestWriteFileAtomicReplacesTheWholeFileOrNothing(t *testing.T) {
	old := []byte(strings.Repeat("old content that is longer than the new\n", 4))
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, dir string) string // returns the path to write
		perm    os.FileMode
		want    []byte // the file's content after; nil: path holds no file
		wantErr string // substring; "" for success
	}{
		{name: "new file", perm: 0o644, want: []byte("new\n"),
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "agent.log") }},
		{name: "existing file replaced whole, mode as asked", perm: 0o600, want: []byte("new\n"),
			setup: func(t *testing.T, dir string) string { return writeOld(t, filepath.Join(dir, "agent.log"), old) }},
		{name: "mode given exactly, not masked", perm: 0o751, want: []byte("new\n"),
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "run.sh") }},
		{name: "missing directory", perm: 0o644, wantErr: "no such file",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "gone", "agent.log") }},
		{name: "parent is a file", perm: 0o644, wantErr: "not a directory",
			setup: func(t *testing.T, dir string) string {
				return filepath.Join(writeOld(t, filepath.Join(dir, "plain"), old), "agent.log")
			}},
		{name: "rename fails: nothing replaced, no temp file left", perm: 0o644, wantErr: "agent.log",
			setup: func(t *testing.T, dir string) string {
				path := filepath.Join(dir, "agent.log")
				if err := os.MkdirAll(filepath.Join(path, "busy"), 0o755); err != nil {
					t.Fatal(err)
				}
				return path
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.setup(t, dir)
			err := WriteFileAtomic(path, []byte("new\n"), tc.perm)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v, want one naming %s and saying %q", err, path, tc.wantErr)
				}
			}
			b, rerr := os.ReadFile(path)
			switch {
			case tc.want == nil && rerr == nil:
				t.Fatalf("%s holds %q after a failed write", path, b)
			case tc.want != nil && !bytes.Equal(b, tc.want):
				t.Fatalf("content %q (%v), want %q", b, rerr, tc.want)
			}
			if tc.wantErr == "" {
				if fi, _ := os.Stat(path); fi.Mode().Perm() != tc.perm {
					t.Fatalf("mode %v, want %v", fi.Mode().Perm(), tc.perm)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) != 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}

func TestAMissingDirectoryIsNotCreatedAndIsErrNotExist(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	err := WriteFileAtomic(filepath.Join(dir, "agent.log"), []byte("x"), 0o644)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the write made %s: %v", dir, err)
	}
}

// A reader racing writers sees one whole version or another, never a
// mix or a prefix.
func TestReadersOfWriteFileAtomicSeeOneWholeVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "final.md")
	versions := [][]byte{[]byte(strings.Repeat("a", 64<<10)), []byte(strings.Repeat("b", 100))}
	if err := WriteFileAtomic(path, versions[0], 0o644); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, v := range versions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if err := WriteFileAtomic(path, v, 0o644); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 200 {
		b, err := os.ReadFile(path)
		if err != nil || (!bytes.Equal(b, versions[0]) && !bytes.Equal(b, versions[1])) {
			t.Fatalf("read %d bytes (%v): not one whole version", len(b), err)
		}
	}
	wg.Wait()
}

func writeOld(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
