package drive

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// schemaRow matches a field row of a docs table: | `name` | type | meaning |.
var schemaRow = regexp.MustCompile("^\\| `([A-Za-z]+)` \\| ([a-z ]+?) \\|")

// docSchema reads docs/doctor-schema.md: per table (top level, findings[]),
// each field's documented JSON type.
func docSchema(t *testing.T) (top, finding map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "doctor-schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	top, finding = map[string]string{}, map[string]string{}
	cur := top
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## `findings[]`") {
			cur = finding
		}
		if m := schemaRow.FindStringSubmatch(l); m != nil {
			cur[m[1]] = m[2]
		}
	}
	if len(top) == 0 || len(finding) == 0 {
		t.Fatalf("docs/doctor-schema.md: no field tables found")
	}
	return top, finding
}

// checkShape fails when obj has a key the doc does not list, lacks one it
// does, or holds a value of another type than documented.
func checkShape(t *testing.T, where string, obj map[string]any, schema map[string]string) {
	t.Helper()
	for k := range obj {
		if _, ok := schema[k]; !ok {
			t.Errorf("%s: key %q is not in docs/doctor-schema.md", where, k)
		}
	}
	for k, typ := range schema {
		v, ok := obj[k]
		if !ok {
			t.Errorf("%s: documented key %q missing", where, k)
			continue
		}
		okType := false
		switch typ {
		case "boolean":
			_, okType = v.(bool)
		case "string":
			_, okType = v.(string)
		case "array of string":
			a, isArr := v.([]any)
			okType = isArr
			for _, x := range a {
				if _, s := x.(string); !s {
					okType = false
				}
			}
		case "array of object":
			a, isArr := v.([]any)
			okType = isArr
			for _, x := range a {
				if _, o := x.(map[string]any); !o {
					okType = false
				}
			}
		default:
			t.Fatalf("docs/doctor-schema.md: unknown type %q for %s", typ, k)
		}
		if !okType {
			t.Errorf("%s.%s = %#v, documented as %s", where, k, v, typ)
		}
	}
}

// A program reads doctor's result as JSON in the documented shape, with
// the text form's exit code: 0 on a healthy repo, 1 with the error
// listed when a wave file is broken.
func TestDoctorJSONMatchesTheDocumentedSchemaAndExitCode(t *testing.T) {
	t.Parallel()
	topSchema, findingSchema := docSchema(t)
	r := e2etest.NewRepo(t)
	r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
	for _, tc := range []struct {
		name     string
		breakIt  bool
		wantCode int
	}{{"healthy", false, 0}, {"broken wave", true, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.breakIt {
				r.Write("docs/plans/waves/wave-1.md", "# Wave 1 - broken\n\nno agents here\n")
			}
			text := r.Run(e2etest.Context(t), "doctor")
			res := r.Run(e2etest.Context(t), "doctor", "--json")
			if res.Code != tc.wantCode || text.Code != res.Code {
				t.Fatalf("doctor --json exit %d, text exit %d, want %d\n%s%s", res.Code, text.Code, tc.wantCode, res.Stdout, res.Stderr)
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(res.Stdout), &doc); err != nil {
				t.Fatalf("doctor --json is not one JSON document: %v\n%s", err, res.Stdout)
			}
			checkShape(t, "doctor", doc, topSchema)
			fs, _ := doc["findings"].([]any)
			if len(fs) != len(e2etest.Lines(text.Stdout)) {
				t.Errorf("%d findings in JSON, %d lines in the text form", len(fs), len(e2etest.Lines(text.Stdout)))
			}
			for i, f := range fs {
				obj, _ := f.(map[string]any)
				checkShape(t, "findings[]", obj, findingSchema)
				if c, _ := obj["check"].(string); c == "" {
					t.Errorf("findings[%d] has no check: %v", i, obj)
				}
			}
			errs, _ := doc["errors"].([]any)
			if ok, _ := doc["ok"].(bool); ok != (tc.wantCode == 0) || (len(errs) > 0) == ok {
				t.Errorf("ok=%v with %d errors, exit %d", ok, len(errs), res.Code)
			}
			if root, _ := doc["workspaceRoot"].(string); root != r.Root {
				t.Errorf("workspaceRoot %q, want %q", root, r.Root)
			}
		})
	}
}
