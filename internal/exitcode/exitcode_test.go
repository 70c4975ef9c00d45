package exitcode

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// table is every constant this package declares, by value, read from its
// source so that a code added here cannot be forgotten by the test.
func table(t *testing.T) map[int64][]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "exitcode.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int64][]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a literal", n.Name)
				}
				v, _ := constant.Int64Val(constant.MakeFromLiteral(lit.Value, lit.Kind, 0))
				codes[v] = append(codes[v], n.Name)
			}
		}
	}
	return codes
}

// documented is every code docs/exit-codes.md gives: the first cell of a
// table row, and "exit N", "exits N", "exit **N**", "N/M" in its prose.
func documented(t *testing.T) map[int64]bool {
	t.Helper()
	doc, err := os.ReadFile("../../docs/exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	codes := map[int64]bool{}
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\| (\d+) \|`),
		regexp.MustCompile(`exits? (?:\*\*)?(\d+)`),
		regexp.MustCompile(`exits? (?:\*\*)?\d+/(\d+)`),
		regexp.MustCompile(`\*\*(\d+)\*\*`),
	} {
		for _, m := range re.FindAllStringSubmatch(string(doc), -1) {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			codes[n] = true
		}
	}
	return codes
}

// A script author reads docs/exit-codes.md: every code the binary can exit
// with is there, and the page promises no code the binary does not have.
func TestEveryExitCodeIsDocumentedAndNoOtherIs(t *testing.T) {
	codes, docs := table(t), documented(t)
	for c, names := range codes {
		if !docs[c] {
			t.Errorf("exit code %d (%v) is not in docs/exit-codes.md", c, names)
		}
	}
	for c := range docs {
		if _, ok := codes[c]; !ok {
			t.Errorf("docs/exit-codes.md documents exit %d, which exitcode does not define", c)
		}
	}
}

// One code has one name within its table: two names for 43 is how
// callers came to disagree about it.
func TestNoCodeHasTwoNames(t *testing.T) {
	for c, names := range table(t) {
		var general []string
		for _, n := range names {
			if !slices.Contains([]string{"StatusCompleted", "StatusRunning", "StatusInputRequired", "StatusChanged", "StatusFailed"}, n) {
				general = append(general, n)
			}
		}
		if len(general) > 1 {
			t.Errorf("exit code %d has the names %v", c, general)
		}
	}
}
