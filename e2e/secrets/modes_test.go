package secrets

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
)

// withUmask runs the test's commands under umask (a process attribute
// every child inherits: the launcher, the tmux server, runners, agents).
func withUmask(t *testing.T, umask int) {
	old := syscall.Umask(umask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// notPrivate lists what under dir other users could read or enter.
func notPrivate(t *testing.T, dir string) []string {
	t.Helper()
	var open []string
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return nil // gone since listed (a temp file)
		}
		n++
		if fi.Mode()&fs.ModeSymlink == 0 && fi.Mode().Perm()&0o077 != 0 {
			rel, _ := filepath.Rel(dir, p)
			open = append(open, rel+" "+fi.Mode().String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("only %d entries under %s: the run wrote nothing to check", n, dir)
	}
	return open
}

// Under the usual umask 022, every record, log and directory a wave run
// and a backlog run leave under .wave/ is the user's alone.
func TestEveryRecordIsPrivateWhateverTheUmask(t *testing.T) {
	withUmask(t, 0o022)
	t.Run("wave", func(t *testing.T) {
		r := e2etest.NewRepo(t)
		r.WriteWave(0, append([]e2etest.Agent{e2etest.ImplAgent("A1")}, e2etest.ClosureAgents()...)...)
		if res := e2etest.Launch(t, r); res.Code != 0 {
			t.Fatalf("launch: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
		}
		e2etest.PostRecord(t, r, "-a", "A1", "--kind", "request", "--summary", "review the greeting", "--target", "agent:A8")
		if res := r.Run(e2etest.Context(t), "launch", "--dry-run", "--lane", "main"); res.Code != 0 {
			t.Fatalf("dry run: %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
		}
		for _, p := range notPrivate(t, filepath.Join(r.Root, ".wave")) {
			t.Errorf("open to other users: .wave/%s", p)
		}
	})
	t.Run("backlog", func(t *testing.T) {
		r := e2etest.NewBacklogRepo(t)
		r.Issue(1, "Add a greeting", "Files: src/greet/**")
		r.Issue(2, "Add a farewell", "Files: src/bye/**")
		r.SetBacklogKey(t, "verify: [sh, -c, 'echo verified']")
		if run := r.RunEnv(e2etest.Context(t), "backlog", "run", "--issues", "1,2", "--no-dashboard"); run.Code != 0 {
			t.Fatalf("run: %d\n%s\n%s", run.Code, run.Stdout, run.Stderr)
		}
		logs, _ := filepath.Glob(filepath.Join(r.Root, ".wave", "lanes", "main", "backlog", "*", "verify", "*"))
		if len(logs) == 0 {
			t.Error("no verify log written: the walk would miss them")
		}
		for _, p := range notPrivate(t, filepath.Join(r.Root, ".wave")) {
			t.Errorf("open to other users: .wave/%s", p)
		}
	})
}
