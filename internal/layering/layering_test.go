package layering

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/wave-orchestrator/wave-orchestrator"

// TestNoImportRunsBackUp fails when a package under dir D imports, directly
// or not, a package outside D that itself depends on D (as wave/manifest
// did through roles, which imports wave): such a package belongs beside D,
// not inside it.
func TestNoImportRunsBackUp(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		set := map[string]bool{}
		for _, d := range f[1:] {
			if strings.HasPrefix(d, module+"/") {
				set[d] = true
			}
		}
		deps[f[0]] = set
	}
	if len(deps) < 10 {
		t.Fatalf("go list found %d packages", len(deps))
	}
	for p, ds := range deps {
		for parent := path.Dir(p); strings.HasPrefix(parent, module+"/"); parent = path.Dir(parent) {
			if _, ok := deps[parent]; !ok {
				continue
			}
			for q := range ds {
				if q != parent && !strings.HasPrefix(q, parent+"/") && deps[q][parent] {
					t.Errorf("%s (inside %s) imports %s, which imports %s", p, parent, q, parent)
				}
			}
		}
	}
}

// TestViewsImportNoLoop fails when a view or a read model imports a loop
// package (the launcher or the supervisor, which run agents and write
// state): the views draw what a read model holds, and a read model is
// built from reduced state, so either can be used without the machinery
// that produced it. direct rules look at the package's own imports only.
func TestViewsImportNoLoop(t *testing.T) {
	loops := []string{module + "/launcher", module + "/supervisor"}
	rules := []struct {
		pkg    string
		direct bool
		deny   []string
	}{
		{"dashboard", false, loops},
		// questions reads backlog runs through backlog/runlog, not the
		// supervisor that writes them.
		{"questions", false, loops},
		{"backlog", false, append([]string{module + "/gitops", module + "/forge", module + "/tmuxadapter"}, loops...)},
	}
	for _, r := range rules {
		field := "Deps"
		if r.direct {
			field = "Imports"
		}
		out, err := exec.Command("go", "list", "-f", `{{join .`+field+` "\n"}}`, module+"/"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, d := range r.deny {
				if dep == d || strings.HasPrefix(dep, d+"/") {
					t.Errorf("%s imports %s (a loop or I/O package; keep it out of views and read models)", r.pkg, dep)
				}
			}
		}
	}
}

// TestHarnessesAreImportedOnlyByTests fails when a package that is not a
// test harness itself imports one (gitops/gittest, tmuxadapter/tmuxtest,
// forge/forgetest, kube/kubetest, …: a package named …test) outside its
// _test files: harnesses run git and tmux directly, start fake servers
// and fail tests, none of which belongs in the binary.
func TestHarnessesAreImportedOnlyByTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	harness := func(p string) bool {
		return strings.HasPrefix(p, module+"/") && strings.HasSuffix(path.Base(p), "test")
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if harness(f[0]) {
			seen++
			continue
		}
		for _, imp := range f[1:] {
			if harness(imp) {
				t.Errorf("%s imports the test harness %s outside its tests", f[0], imp)
			}
		}
	}
	if seen < 3 {
		t.Fatalf("go list found %d harness packages; the rule matches nothing", seen)
	}
}

// TestLoopsLeaveTheBackendToRuns fails when a loop imports a backend
// package itself: package runs chooses the lane's backend once and the
// loops start, watch and stop runs through it (and build their launch
// payloads there), so backlog workers can move to Kubernetes without
// touching the supervisor. Direct imports only: runs itself imports both.
func TestLoopsLeaveTheBackendToRuns(t *testing.T) {
	rules := []struct {
		pkg  string
		deny []string
	}{
		{"supervisor", []string{module + "/tmuxadapter", module + "/kube"}},
		{"launcher", []string{module + "/tmuxadapter", module + "/kube"}},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"/"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		imports := strings.Fields(string(out))
		for _, dep := range imports {
			for _, d := range r.deny {
				if dep == d || strings.HasPrefix(dep, d+"/") {
					t.Errorf("%s imports %s (choose and drive the backend in package runs)", r.pkg, dep)
				}
			}
		}
		if !slices.Contains(imports, module+"/runs") {
			t.Errorf("%s does not import runs: its launch payloads are built there", r.pkg)
		}
	}
}

// TestDecisionPackagesReachNothing fails when a package that decides —
// wave reads and validates wave files, roles binds roles, gate judges
// markers and files, retry plans what runs again — depends, directly or
// not, on a room that runs or reaches something (a loop, the runs and
// their backends, git, an issue tracker, notifications), or itself
// imports os/exec or net: they decide from what they are handed, so each
// is table-tested without a process, a server or a repository.
func TestDecisionPackagesReachNothing(t *testing.T) {
	var rooms []string
	for _, r := range []string{"launcher", "supervisor", "runs", "runtime", "tmuxadapter", "kube", "gitops", "forge", "notify"} {
		rooms = append(rooms, module+"/"+r)
	}
	for _, pkg := range []string{"wave", "roles", "gate", "retry"} {
		out, err := exec.Command("go", "list", "-f", `{{join .Deps " "}}|{{join .Imports " "}}`, module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		deps, imports, _ := strings.Cut(strings.TrimSpace(string(out)), "|")
		for _, dep := range strings.Fields(deps) {
			for _, r := range rooms {
				if dep == r || strings.HasPrefix(dep, r+"/") {
					t.Errorf("%s depends on %s: a decision package decides from what it is handed", pkg, dep)
				}
			}
		}
		for _, imp := range strings.Fields(imports) {
			if imp == "os/exec" || imp == "net" || strings.HasPrefix(imp, "net/") {
				t.Errorf("%s imports %s: a decision package runs and dials nothing", pkg, imp)
			}
		}
	}
}

// TestInternalIsTheFloor fails when a package under internal/ imports a
// package of the module outside internal/, in its code or its tests:
// internal holds small helpers every room may use (fan-out, terminal
// text, exit codes), so it sits below them all. A harness that builds
// on a room (a fake tmux server, the e2e repository builder) lives
// beside what it fakes instead (tmuxadapter/tmuxtest, e2e/e2etest).
func TestInternalIsTheFloor(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		module+"/internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 5 {
		t.Fatalf("go list found %d internal packages", len(lines))
	}
	for _, line := range lines {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, module+"/") && !strings.HasPrefix(imp, module+"/internal/") {
				t.Errorf("%s imports %s: internal/ is the floor; move the package beside what it builds on", f[0], imp)
			}
		}
	}
}

// TestOnlyTheSandboxRunsBubblewrap fails when a package other than
// sandbox looks bubblewrap's binary up or runs it by name: the sandbox is the one
// room that builds its command lines and runs it, so what a sandboxed
// process can reach is decided in one place (docs/security-model.md).
func TestOnlyTheSandboxRunsBubblewrap(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.Dir}} {{join .GoFiles " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		dir := f[0]
		for _, name := range f[1:] {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `("bwrap"`) {
				continue
			}
			seen++
			if filepath.Base(dir) != "sandbox" {
				t.Errorf("%s names bubblewrap's binary: run it through package sandbox", filepath.Join(dir, name))
			}
		}
	}
	if seen == 0 {
		t.Fatal("no package names bwrap; the rule matches nothing")
	}
}

// TestSubmittedLeavesLoopsAndBackendsAlone fails when package submitted
// (the queue of submitted runs and its watcher) imports a loop, a
// backend or package runs, or starts processes itself: it runs each
// launcher as a child through runtime, and where the watcher runs (a
// tmux session) is its caller's to choose. Direct imports only.
func TestSubmittedLeavesLoopsAndBackendsAlone(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"/submitted").Output()
	if err != nil {
		t.Fatalf("go list submitted: %v", err)
	}
	imports := strings.Fields(string(out))
	deny := []string{module + "/launcher", module + "/supervisor", module + "/runs", module + "/tmuxadapter", module + "/kube",
		module + "/gitops", module + "/forge", "os/exec"}
	for _, dep := range imports {
		for _, d := range deny {
			if dep == d || strings.HasPrefix(dep, d+"/") {
				t.Errorf("submitted imports %s (the launcher is a child started through runtime; the loops and backends are not the queue's)", dep)
			}
		}
	}
	if !slices.Contains(imports, module+"/runtime") {
		t.Error("submitted does not import runtime: its launchers are started and signalled there")
	}
}

// TestOnlyRuntimeSignalsProcesses fails when code outside package
// runtime (and outside tests and test harnesses) sends a signal:
// syscall.Kill, unix.Kill, or a Signal or Kill on an os.Process. A
// process is started to be stopped through runtime (GroupCommand,
// StartChild, StartHeld, Terminate, EndSessions), which checks it is
// still the process it started.
func TestOnlyRuntimeSignalsProcesses(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Dir}} {{join .GoFiles " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	files := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] == module+"/runtime" || strings.HasSuffix(path.Base(f[0]), "test") {
			continue
		}
		for _, name := range f[2:] {
			files++
			file := filepath.Join(f[1], name)
			for _, at := range signalCalls(t, file) {
				t.Errorf("%s signals a process (%s): do it through package runtime", file, at)
			}
		}
	}
	if files < 100 {
		t.Fatalf("read %d files; the rule matches nothing", files)
	}
}

// signalCalls lists the signal sends in a Go file: syscall.Kill,
// unix.Kill, and x.Process.Signal or x.Process.Kill. A function assigned
// to an exec.Cmd's Cancel is exempt: os/exec calls it only before Wait
// has reaped the process, so it signals the process the Cmd started and
// no other.
func signalCalls(t *testing.T, file string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 1 && len(as.Rhs) == 1 {
			lhs, isSel := as.Lhs[0].(*ast.SelectorExpr)
			if _, isFunc := as.Rhs[0].(*ast.FuncLit); isSel && isFunc && lhs.Sel.Name == "Cancel" {
				return false
			}
		}
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		switch x := sel.X.(type) {
		case *ast.Ident:
			if sel.Sel.Name == "Kill" && (x.Name == "syscall" || x.Name == "unix") {
				out = append(out, fmt.Sprintf("%s.Kill at line %d", x.Name, fset.Position(sel.Pos()).Line))
			}
		case *ast.SelectorExpr:
			if x.Sel.Name == "Process" && (sel.Sel.Name == "Signal" || sel.Sel.Name == "Kill") {
				out = append(out, fmt.Sprintf("Process.%s at line %d", sel.Sel.Name, fset.Position(sel.Pos()).Line))
			}
		}
		return true
	})
	return out
}

// TestTheAgentsDoorOpensOnlyOntoTheCLI fails when the MCP server's
// package (or the skill it installs) imports a package of the module
// beyond internal/ and jsonfile: no loop (launcher, supervisor), no read
// model, no backend. A tool reads and writes the lane only through the
// CLI's own commands, which the binary runs for it (mcpserver.Lane), so
// what an agent can do through MCP is exactly what the command does,
// intents and errors included, and never more (docs/mcp.md).
func TestTheAgentsDoorOpensOnlyOntoTheCLI(t *testing.T) {
	allowed := []string{module + "/internal/", module + "/jsonfile"}
	for _, pkg := range []string{"mcpserver", "skill"} {
		out, err := exec.Command("go", "list", "-f", `{{join .Deps "\n"}}`, module+"/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if !strings.HasPrefix(dep, module+"/") {
				continue
			}
			if !slices.ContainsFunc(allowed, func(a string) bool { return strings.HasPrefix(dep, a) }) {
				t.Errorf("%s imports %s: it reaches the lane only through the CLI's commands (mcpserver.Lane, run by cmd/wave-orchestrator)", pkg, dep)
			}
		}
	}
}

// TestTheCheckoutReachesOnlyGit fails when supervisor/checkout (where a
// backlog worker's files live, local or in a pod) depends on a loop, the
// runs and their backends, an issue tracker or notifications, imports
// tmux or starts processes or dials itself, or is imported by any
// package but the supervisor: it reaches a worker's files and origin
// through gitops only, and its goroutine contract (its package doc) is
// the supervisor's loop and jobs, so no one else drives it.
func TestTheCheckoutReachesOnlyGit(t *testing.T) {
	const pkg = module + "/supervisor/checkout"
	out, err := exec.Command("go", "list", "-f", `{{join .Deps " "}}|{{join .Imports " "}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	deps, imports, _ := strings.Cut(strings.TrimSpace(string(out)), "|")
	var rooms []string
	for _, r := range []string{"launcher", "supervisor", "runs", "kube", "forge", "notify"} {
		rooms = append(rooms, module+"/"+r)
	}
	for _, dep := range strings.Fields(deps) {
		for _, r := range rooms {
			if dep == r || strings.HasPrefix(dep, r+"/") {
				t.Errorf("supervisor/checkout depends on %s: it reaches a worker's files through gitops only", dep)
			}
		}
	}
	for _, imp := range strings.Fields(imports) {
		if imp == module+"/tmuxadapter" || imp == "os/exec" || imp == "net" || strings.HasPrefix(imp, "net/") {
			t.Errorf("supervisor/checkout imports %s: git is gitops's, and the runs are the supervisor's", imp)
		}
	}
	out, err = exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	users := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if !slices.Contains(f[1:], pkg) {
			continue
		}
		users++
		if f[0] != module+"/supervisor" {
			t.Errorf("%s imports supervisor/checkout: only the supervisor drives a worker's checkout", f[0])
		}
	}
	if users == 0 {
		t.Fatal("nothing imports supervisor/checkout; the rule matches nothing")
	}
}
