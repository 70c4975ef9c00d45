package main

import (
	"debug/elf"
	"encoding/json"
	"os/exec"
	goruntime "runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/internal/e2etest"
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

// Release ldflags override what the toolchain recorded; a binary without
// a record still says what it is.
func TestVersionLdflagsOverrideTheToolchainRecord(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		name              string
		bi                *debug.BuildInfo
		ver, commit, date string
		wantVer, wantRev  string
		wantTime          string
		wantModified      bool
	}{
		{"toolchain record", vcs, "", "", "", "(devel)", "0123456789abcdef", "2026-01-02T03:04:05Z", true},
		{"release ldflags", vcs, "v9.8.7", "abc123", "2030-01-02T03:04:05Z", "v9.8.7", "abc123", "2030-01-02T03:04:05Z", false},
		{"go install of a tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "", "", "", "v1.2.3", "", "", false},
		{"no record", nil, "", "", "", "(devel)", "", "", false},
	} {
		b := mergeBuildInfo(tc.bi, tc.ver, tc.commit, tc.date)
		if b.Version != tc.wantVer || b.Revision != tc.wantRev || b.Time != tc.wantTime || b.Modified != tc.wantModified || b.GoVersion != goruntime.Version() {
			t.Errorf("%s: %+v", tc.name, b)
		}
	}
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
