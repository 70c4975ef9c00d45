// Package paritytest holds what the tests comparing this tool with the
// reference share: a case's files copied into a temp repo, and the
// differences between two decoded JSON values listed by path. Only tests
// import it.
package paritytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// CopyTree copies the files under src over dst, leaving out the entries
// directly under src named in skip (a case's own metadata); a failure
// fails t.
func CopyTree(t testing.TB, src, dst string, skip ...string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if slices.Contains(skip, rel) {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Diff lists, by JSON path under path, every value of want (the
// reference's) that got (ours) does not hold: objects key by key in
// sorted order, arrays of one length element by element, anything else
// compared whole.
func Diff(path string, want, got any) []string {
	var out []string
	diff(path, want, got, &out)
	return out
}

func diff(path string, want, got any, out *[]string) {
	switch wv := want.(type) {
	case map[string]any:
		gv, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range wv {
			keys[k] = true
		}
		for k := range gv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		slices.Sort(sorted)
		for _, k := range sorted {
			diff(path+"."+k, wv[k], gv[k], out)
		}
		return
	case []any:
		gv, ok := got.([]any)
		if !ok || len(gv) != len(wv) {
			break
		}
		for i := range wv {
			diff(fmt.Sprintf("%s[%d]", path, i), wv[i], gv[i], out)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(got)
		*out = append(*out, fmt.Sprintf("%s: reference %s, ours %s", path, trunc(w), trunc(g)))
	}
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(bytes.TrimSpace(b))
}
