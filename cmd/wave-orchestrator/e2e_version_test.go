package main

import (
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

func versionJSON(t *testing.T, bin string) buildInfo {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatalf("%s version --json: %v", bin, err)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out)
	}
	return b
}

func TestVersionReportsToolchainAndFlags(t *testing.T) {
	b := versionJSON(t, binPath)
	if b.GoVersion != goruntime.Version() || b.Platform != goruntime.GOOS+"/"+goruntime.GOARCH || b.Version == "" {
		t.Fatalf("version --json %+v, want go %s on %s/%s", b, goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	}
	text, err := exec.Command(binPath, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	flag, err := exec.Command(binPath, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	first := lines(string(text))[0]
	if strings.TrimSpace(string(flag)) != first || !strings.HasPrefix(first, "wave-orchestrator "+b.Version) || !strings.Contains(string(text), "go        "+b.GoVersion) {
		t.Fatalf("version:\n%s\n--version:\n%s", text, flag)
	}
}

// TestVersionFromVCSAndLdflags commits the working tree to a fresh
// repository (a plain checkout, so the toolchain records its revision)
// and builds it, then once more with release ldflags, which override it.
func TestVersionFromVCSAndLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	src := strings.TrimSpace(string(top))
	files, err := exec.Command("git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "src")
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			continue // deleted in the working tree
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(clone, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", clone, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "snapshot")
	head := git("rev-parse", "HEAD")
	build := func(name string, args ...string) string {
		bin := filepath.Join(t.TempDir(), name)
		cmd := exec.Command("go", append(append([]string{"build", "-buildvcs=true"}, args...), "-o", bin, "./cmd/wave-orchestrator")...)
		cmd.Dir = clone
		cmd.Env = append(os.Environ(), "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
		return bin
	}
	b := versionJSON(t, build("vcs"))
	if b.Revision != head || b.Modified || b.Time == "" || !strings.Contains(b.Version, head[:12]) {
		t.Fatalf("from a clean checkout at %s: %+v", head, b)
	}
	b = versionJSON(t, build("release", "-ldflags", "-X main.version=v9.8.7 -X main.commit=abc123 -X main.date=2030-01-02T03:04:05Z"))
	if b.Version != "v9.8.7" || b.Revision != "abc123" || b.Time != "2030-01-02T03:04:05Z" || b.Modified {
		t.Fatalf("ldflags did not override: %+v", b)
	}
}

// TestStaticBuild holds the README's "one static Go binary" for release
// builds: with CGO_ENABLED=0 the binary has no ELF interpreter and needs
// no shared library.
func TestStaticBuild(t *testing.T) {
	if testing.Short() || goruntime.GOOS != "linux" {
		t.Skip("builds the binary; ELF check on linux only")
	}
	bin := filepath.Join(t.TempDir(), "wave-orchestrator")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
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
