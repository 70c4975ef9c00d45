package docschema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const doc = "# x\n\n## Other\n\n### Thing\n\n| field | type | meaning |\n|---|---|---|\n| `ignored` | string | not in the schema |\n\n" +
	"## `demo`\n\n### Top\n\n| field | type | meaning |\n|---|---|---|\n" +
	"| `name` | string | a name |\n| `state` | `on` \\| `off` | enum |\n| `child` | Child \\| null | nested |\n| `items` | array of Child | list |\n| `n` | number | count |\n\n" +
	"### Child\n\n| field | type | meaning |\n|---|---|---|\n| `ok` | bool | flag |\n"

func TestValidateFollowsTheDocumentsTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "schema.md")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Parse(path, "`demo")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s["Thing"]; ok {
		t.Fatal("a section under another heading was read")
	}
	good := map[string]any{"name": "x", "state": "on", "child": nil, "items": []any{map[string]any{"ok": true}}, "n": 2.0}
	if errs := s.Validate(good, "Top"); len(errs) != 0 {
		t.Fatalf("valid document: %v", errs)
	}
	bad := map[string]any{"name": 1.0, "state": "dim", "child": map[string]any{"ok": "yes"}, "items": []any{}, "extra": true}
	errs := strings.Join(s.Validate(bad, "Top"), "\n")
	for _, want := range []string{"$.name: want string", "$.state: want one of on, off", "$.child.ok: want bool", `missing "n"`, `key "extra" is not documented`} {
		if !strings.Contains(errs, want) {
			t.Errorf("errors lack %q:\n%s", want, errs)
		}
	}
	if _, err := Parse(path, "`nothing"); err == nil {
		t.Error("a heading with no tables parsed")
	}
}
