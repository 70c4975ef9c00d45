// Package scaffold owns `init`: the starter files that make a repository
// ready for its first wave — wave.config.yaml, docs/plans/waves/wave-0.md
// and the role prompts under docs/agents/ — and the .gitignore entry for
// the orchestrator's state directory.
package scaffold

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed templates demo
var templates embed.FS

// ignoreLine is the .gitignore entry for orchestrator state.
const ignoreLine = ".wave/"

// projectPlaceholder in wave.config.yaml becomes the repo's name.
const projectPlaceholder = "{{PROJECT}}"

func filesUnder(dir string) []string {
	var out []string
	_ = fs.WalkDir(templates, dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return err
	})
	sort.Strings(out)
	return out
}

// ExistsError is returned when Write would overwrite files.
type ExistsError struct {
	Files []string // repo-relative
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("refusing to overwrite existing files (use --force): %s", strings.Join(e.Files, ", "))
}

// Write scaffolds the repo at repoRoot so that `doctor` and
// `launch --dry-run` pass immediately. It refuses to overwrite any
// existing file unless force, naming every such file in an *ExistsError.
// It returns the repo-relative paths written, .gitignore included when it
// was created or appended to.
func Write(repoRoot string, force bool) ([]string, error) {
	written, err := writeTree(repoRoot, "templates", force)
	if err != nil {
		return written, err
	}
	abs, _ := filepath.Abs(repoRoot)
	changed, err := ensureIgnored(filepath.Join(abs, ".gitignore"))
	if err != nil {
		return written, fmt.Errorf("scaffold: .gitignore: %w", err)
	}
	if changed {
		written = append(written, ".gitignore")
	}
	return written, nil
}

// WriteBacklogDemo writes a small local backlog (docs/backlog/*.md) for
// the built-in simulated worker: two issues that may run side by side and
// one that shares a surface with the first, so the demo shows grouping,
// parallel workers, serialized merges and one final PR.
func WriteBacklogDemo(repoRoot string, force bool) ([]string, error) {
	return writeTree(repoRoot, "demo", force)
}

func writeTree(repoRoot, dir string, force bool) ([]string, error) {
	files := filesUnder(dir)
	if !force {
		var exist []string
		for _, rel := range files {
			if _, err := os.Lstat(filepath.Join(repoRoot, filepath.FromSlash(rel))); err == nil {
				exist = append(exist, rel)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("scaffold: check %s: %w", rel, err)
			}
		}
		if len(exist) > 0 {
			return nil, &ExistsError{Files: exist}
		}
	}
	abs, err := filepath.Abs(repoRoot)
	if err != nil {
		return nil, fmt.Errorf("scaffold: repo root %q: %w", repoRoot, err)
	}
	var written []string
	for _, rel := range files {
		data, err := templates.ReadFile(path.Join(dir, rel))
		if err != nil {
			return written, fmt.Errorf("scaffold: template %s: %w", rel, err)
		}
		if rel == "wave.config.yaml" {
			data = bytes.ReplaceAll(data, []byte(projectPlaceholder), []byte(yamlString(filepath.Base(abs))))
		}
		if err := writeFile(filepath.Join(abs, filepath.FromSlash(rel)), data); err != nil {
			return written, fmt.Errorf("scaffold: write %s: %w", rel, err)
		}
		written = append(written, rel)
	}
	return written, nil
}

// yamlString quotes s as a YAML scalar; a JSON string is one, and it
// keeps a directory name with quotes or colons from breaking the file.
func yamlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// writeFile replaces p through a temp file and rename, so a symlink at p
// is replaced rather than followed out of the repository.
func writeFile(p string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".scaffold-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// ensureIgnored appends ignoreLine to the .gitignore at p unless an
// equivalent line is already there. It reports whether it changed p.
func ensureIgnored(p string) (bool, error) {
	data, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		switch strings.TrimSpace(line) {
		case ".wave", ".wave/", "/.wave", "/.wave/":
			return false, nil
		}
	}
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	data = append(data, ignoreLine+"\n"...)
	return true, os.WriteFile(p, data, 0o644)
}
