package backlog

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseSurface(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		labels   []string
		globs    []string
		areas    []string
		rejected []string // entries refused
	}{
		{name: "inline comma list", body: "Files: internal/**, cmd/main.go", globs: []string{"internal/**", "cmd/main.go"}},
		{name: "inline space list", body: "Files: a.go b.go\tc.go", globs: []string{"a.go", "b.go", "c.go"}},
		{name: "surface key", body: "Surface: api/*.go", globs: []string{"api/*.go"}},
		{name: "key in any case", body: "FILES: a.go\nsurface: b.go", globs: []string{"a.go", "b.go"}},
		{name: "bullets after the key", body: "Files:\n- a/**\n* b.go\n- `c.go`\n\nnot: this", globs: []string{"a/**", "b.go", "c.go"}},
		{name: "bullets end at a non-bullet line", body: "Files:\n- a.go\nThen we refactor x.go\n- y.go", globs: []string{"a.go"}},
		{name: "bullets end at a blank line", body: "Files:\n- a.go\n\n- y.go", globs: []string{"a.go"}},
		{name: "indented bullets", body: "Files:\n  - a.go\n    - b.go", globs: []string{"a.go", "b.go"}},
		{name: "heading key", body: "## Files\n- a.go\n- b.go", globs: []string{"a.go", "b.go"}},
		{name: "heading key with colon", body: "### Surface:\n- a.go", globs: []string{"a.go"}},
		{name: "bold key, colon inside", body: "**Files:** a.go, b.go", globs: []string{"a.go", "b.go"}},
		{name: "bold key, colon outside", body: "**Files**: a.go", globs: []string{"a.go"}},
		{name: "backticked spans only, description dropped", body: "Files:\n- `internal/gate/` — the gate logic\n- `a.go`, `b.go` (both)", globs: []string{"internal/gate/", "a.go", "b.go"}},
		{name: "quotes stripped", body: `Files: "a.go", 'b.go'`, globs: []string{"a.go", "b.go"}},
		{name: "leading ./ removed", body: "Files: ./a.go, ././b/**, c//d.go, e/./f.go", globs: []string{"a.go", "b/**", "c/d.go", "e/f.go"}},
		{name: "trailing slash kept", body: "Files: internal/", globs: []string{"internal/"}},
		{name: "duplicates dropped", body: "Files: a.go, a.go, ./a.go", globs: []string{"a.go"}},
		{name: "several lists are merged", body: "Files: a.go\nsome text\nSurface: b.go", globs: []string{"a.go", "b.go"}},
		{name: "not a key: word starting with files", body: "Filesystem: x.go\nSurface area: y", globs: []string{}},
		{name: "key mid-line is not a key", body: "The Files: a.go list", globs: []string{}},
		{name: "CRLF body", body: "Files:\r\n- a.go\r\n- b.go\r\n", globs: []string{"a.go", "b.go"}},
		{name: "absolute path rejected", body: "Files: /etc/passwd, a.go", globs: []string{"a.go"}, rejected: []string{"/etc/passwd"}},
		{name: "home path rejected", body: "Files: ~/x", globs: []string{}, rejected: []string{"~/x"}},
		{name: "dot-dot rejected", body: "Files: ../other/x.go, a/../../b", globs: []string{}, rejected: []string{"../other/x.go", "a/../../b"}},
		{name: "backslash rejected", body: `Files: internal\x.go`, globs: []string{}, rejected: []string{`internal\x.go`}},
		{name: "invalid glob rejected", body: "Files: a[.go, [z-a]", globs: []string{}, rejected: []string{"a[.go", "[z-a]"}},
		{name: "glob matching nothing rejected", body: "Files: [!\x00-\U0010FFFF]", globs: []string{}, rejected: []string{"[!\x00-\U0010FFFF]"}},
		{name: "control character rejected", body: "Files: a\x1b[31m.go", globs: []string{}, rejected: []string{"a\x1b[31m.go"}},
		{name: "repository root rejected", body: "Files: ./", globs: []string{}, rejected: []string{"./"}},
		{name: "area labels", labels: []string{"bug", "area:API", " area: ui ", "area:", "Area:api"}, globs: []string{}, areas: []string{"api", "ui"}},
		{name: "nothing declared", body: "Fix the thing.", labels: []string{"bug"}, globs: []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := ParseSurface(c.body, c.labels)
			if !slices.Equal(s.Globs, c.globs) {
				t.Errorf("globs = %q, want %q", s.Globs, c.globs)
			}
			if want := orEmpty(c.areas); !slices.Equal(s.Areas, want) {
				t.Errorf("areas = %q, want %q", s.Areas, want)
			}
			var rej []string
			for _, r := range s.Rejected {
				if r.Reason == "" {
					t.Errorf("rejected %q without a reason", r.Entry)
				}
				rej = append(rej, r.Entry)
			}
			if !slices.Equal(rej, c.rejected) {
				t.Errorf("rejected = %q, want %q (%+v)", rej, c.rejected, s.Rejected)
			}
			if s.Declared() != (len(c.globs) > 0 || len(c.areas) > 0) {
				t.Errorf("Declared() = %v", s.Declared())
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestParseSurfaceRejectReasons(t *testing.T) {
	for entry, want := range map[string]string{
		"/abs":     "absolute",
		"../x":     "'..'",
		`a\b`:      `'\'`,
		"a[":       "invalid glob",
		"./":       "whole repository",
		"a\x07.go": "control character",
		// A surface glob is shown to people: one that reads as another
		// path (a right-to-left override) or hides text is refused.
		"src/\u202eog.txt": "bidi",
		"a\u200b/**":       "invisible",
	} {
		s := ParseSurface("Files: "+entry, nil)
		if len(s.Rejected) != 1 || !strings.Contains(s.Rejected[0].Reason, want) {
			t.Errorf("%q: rejected = %+v, want a reason mentioning %q", entry, s.Rejected, want)
		}
	}
}

func TestParseSurfaceCapsEntries(t *testing.T) {
	var b strings.Builder
	b.WriteString("Files:")
	for i := range maxSurfaceEntries + 3 {
		b.WriteString(" f/" + strconv.Itoa(i) + ".go")
	}
	s := ParseSurface(b.String(), nil)
	if len(s.Globs) != maxSurfaceEntries || len(s.Rejected) != 3 {
		t.Fatalf("globs %d, rejected %d: want %d and 3", len(s.Globs), len(s.Rejected), maxSurfaceEntries)
	}
}

func TestParseSurfaceCarriesShellTextAsData(t *testing.T) {
	s := ParseSurface("Files: `$(rm -rf ~).go`, `a;b|c&d>e.go`\nSurface: \"$HOME/*.go\"", nil)
	want := []string{"$(rm -rf ~).go", "a;b|c&d>e.go", "$HOME/*.go"}
	if !slices.Equal(s.Globs, want) {
		t.Fatalf("globs = %q, want %q", s.Globs, want)
	}
}

func TestCollide(t *testing.T) {
	sf := func(globs []string, areas ...string) Surface { return Surface{Globs: globs, Areas: areas} }
	cases := []struct {
		name     string
		a, b     Surface
		parallel bool
		want     bool
		why      string
	}{
		{"intersecting globs", sf([]string{"internal/**"}), sf([]string{"docs/*.md", "internal/x/*.go"}), false, true, "both touch internal/** and internal/x/*.go"},
		{"same glob", sf([]string{"a.go"}), sf([]string{"a.go"}), false, true, "both touch a.go"},
		{"disjoint globs", sf([]string{"a/*.go"}), sf([]string{"a/*.md"}), false, false, ""},
		{"shared area", sf(nil, "api"), sf([]string{"x.go"}, "ui", "api"), false, true, "both area:api"},
		{"area beats globs in the reason", sf([]string{"a.go"}, "api"), sf([]string{"a.go"}, "api"), false, true, "both area:api"},
		{"different areas, disjoint globs", sf([]string{"a.go"}, "api"), sf([]string{"b.go"}, "ui"), false, false, ""},
		{"undeclared collides with everything", sf(nil), sf([]string{"a.go"}), false, true, "no declared surface (Files:/Surface: list or area: label)"},
		{"two undeclared collide", sf(nil), sf(nil), false, true, "no declared surface (Files:/Surface: list or area: label)"},
		{"undeclared parallel", sf(nil), sf([]string{"a.go"}), true, false, ""},
		{"parallel does not hide a real collision", sf([]string{"a.go"}), sf([]string{"*.go"}), true, true, "both touch a.go and *.go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, why := Collide(c.a, c.b, c.parallel)
			if got != c.want || why != c.why {
				t.Errorf("Collide = %v, %q; want %v, %q", got, why, c.want, c.why)
			}
			if back, _ := Collide(c.b, c.a, c.parallel); back != got {
				t.Errorf("Collide is not symmetric")
			}
		})
	}
}

// FuzzParseSurface: any body and labels parse without panicking, into
// globs the supervisor can trust — relative, inside the repository,
// free of control characters, valid, matching something — and the same
// input always gives the same surface.
func FuzzParseSurface(f *testing.F) {
	f.Add("Files: internal/**, cmd/main.go", "area:api")
	f.Add("## Files\n- `a/**` — x\n* ./b.go\n\nFiles: ../x, /y, a[", "")
	f.Add("**Surface:** \"a b\" 'c'\r\n", "Area:UI")
	f.Add("Files:\n- \x00\n- [!]]\n- a//./b/", "area:")
	f.Fuzz(func(t *testing.T, body, label string) {
		s := ParseSurface(body, []string{label})
		for _, g := range s.Globs {
			if g == "" || strings.HasPrefix(g, "/") || hasControl(g) || strings.Contains(g, `\`) {
				t.Fatalf("untrustworthy glob %q from %q", g, body)
			}
			if slices.Contains(strings.Split(g, "/"), "..") {
				t.Fatalf("glob %q leaves the repository", g)
			}
			if ValidGlob(g) != nil || !GlobsIntersect(g, g) {
				t.Fatalf("glob %q is not usable", g)
			}
		}
		for _, r := range s.Rejected {
			if r.Reason == "" {
				t.Fatalf("rejected %q without a reason", r.Entry)
			}
		}
		again := ParseSurface(body, []string{label})
		if !slices.Equal(s.Globs, again.Globs) || !slices.Equal(s.Areas, again.Areas) {
			t.Fatalf("not deterministic")
		}
	})
}

func TestOutsideListsOnlyFilesNoDeclaredGlobCovers(t *testing.T) {
	cases := []struct {
		name  string
		globs []string
		files []string
		want  []string
	}{
		{"inside", []string{"src/parser/**"}, []string{"src/parser/a.go", "src/parser/x/y.go"}, nil},
		{"a workflow beside the parser", []string{"src/parser/**"}, []string{"src/parser/a.go", ".github/workflows/x.yml"}, []string{".github/workflows/x.yml"}},
		{"a literal file", []string{"docs/guide.md"}, []string{"docs/guide.md", "docs/other.md"}, []string{"docs/other.md"}},
		{"undeclared: nothing to compare", nil, []string{"a.go"}, nil},
		{"duplicates once", []string{"a/**"}, []string{"b.go", "b.go"}, []string{"b.go"}},
		{"a name that is no path is outside", []string{"a/**"}, []string{"../escape"}, []string{"../escape"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Outside(Surface{Globs: c.globs}, c.files)
			if !slices.Equal(got, c.want) {
				t.Errorf("Outside(%v, %v) = %v, want %v", c.globs, c.files, got, c.want)
			}
		})
	}
}
