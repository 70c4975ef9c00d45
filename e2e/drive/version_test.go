package drive

import (
	"debug/elf"
	"encoding/json"
	"os/exec"
	goruntime "runtime"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

func versionJSON(t *testing.T, bin string) e2etest.BuildInfo {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var b e2etest.BuildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	return b
}

func TestVersionReportsToolchainAndFlags(t *testing.T) {
	b := versionJSON(t, e2etest.Bin())
	if b.GoVersion != goruntime.Version() || b.Platform != goruntime.GOOS+"/"+goruntime.GOARCH || b.Version == "" {
		t.Fatalf("version --json %+v, want go %s on %s/%s", b, goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	}
	text, err := exec.Command(e2etest.Bin(), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	flag, err := exec.Command(e2etest.Bin(), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	first := e2etest.Lines(string(text))[0]
	if strings.TrimSpace(string(flag)) != first || !strings.HasPrefix(first, "wave-orchestrator "+b.Version) || !strings.Contains(string(text), "go        "+b.GoVersion) {
		t.Fatalf("version:\n%s\n--version:\n%s", text, flag)
	}
}

// TestVersionRecordsTheCheckoutItWasBuiltFrom: the tests' binary is
// built from this checkout, so the toolchain recorded its revision and
// whether the tree had changes (git status --porcelain, as go build asks).
func TestVersionRecordsTheCheckoutItWasBuiltFrom(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	src := strings.TrimSpace(string(top))
	head, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("no commit to build from: %v", err)
	}
	porcelain, err := exec.Command("git", "-C", src, "status", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	b := versionJSON(t, e2etest.Bin())
	if b.Revision == "" && linkedWorktree(src) {
		t.Skip("the go command records no VCS facts in a linked git worktree")
	}
	rev := strings.TrimSpace(string(head))
	if b.Revision != rev || b.Time == "" || b.Modified != (len(porcelain) > 0) {
		t.Fatalf("version --json %+v; the checkout is at %s, modified=%v", b, rev, len(porcelain) > 0)
	}
	if !strings.Contains(e2etest.Lines(string(mustOutput(t, e2etest.Bin(), "version")))[0], rev[:12]) {
		t.Fatalf("version does not name revision %s", rev[:12])
	}
}

func linkedWorktree(dir string) bool {
	gitDir, err1 := exec.Command("git", "-C", dir, "rev-parse", "--absolute-git-dir").Output()
	common, err2 := exec.Command("git", "-C", dir, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	return err1 == nil && err2 == nil && strings.TrimSpace(string(gitDir)) != strings.TrimSpace(string(common))
}

func mustOutput(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return out
}

// TestStaticBuild holds the README's "one static Go binary" for release
// builds: the tests' binary is built as release builds are
// (CGO_ENABLED=0), and it has no ELF interpreter and needs no shared
// library.
func TestStaticBuild(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("ELF check on linux only")
	}
	f, err := elf.Open(e2etest.Bin())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("CGO_ENABLED=0 binary has a %v program header: not static", p.Type)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("CGO_ENABLED=0 binary needs %v", libs)
	}
}

// A reachable text/template execution (cobra runs one for a custom
// version, help or usage template) makes the linker keep every exported
// method of every type, which for the Kubernetes API types is a third of
// the binary that every process pages in.
func TestBinaryExecutesNoTextTemplate(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to read the binary's symbols:", err)
	}
	out, err := exec.Command(goBin, "tool", "nm", e2etest.Bin()).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v\n%s", err, stderrOf(err))
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "text/template.(*Template).Execute") {
			t.Fatalf("the binary can execute a text/template (%s): a custom cobra template is set somewhere, or a package with HTML/text debug pages is linked (gRPC's, left out by -tags grpcnotrace; `go build -ldflags=-dumpdep` shows who reaches it)", strings.TrimSpace(line))
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
