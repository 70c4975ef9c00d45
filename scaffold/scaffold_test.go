package scaffold

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

var wantFiles = []string{
	"docs/agents/wave-backlog-worker-role.md",
	"docs/agents/wave-cont-eval-role.md",
	"docs/agents/wave-cont-qa-role.md",
	"docs/agents/wave-design-role.md",
	"docs/agents/wave-documentation-role.md",
	"docs/agents/wave-integration-role.md",
	"docs/agents/wave-security-role.md",
	"docs/plans/waves/wave-0.md",
	"wave.config.yaml",
}

func TestWriteThenLoad(t *testing.T) {
	dir := t.TempDir()
	written, err := Write(dir, false)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if want := append(slices.Clone(wantFiles), ".gitignore"); !reflect.DeepEqual(written, want) {
		t.Errorf("written = %q\nwant %q", written, want)
	}
	for _, rel := range wantFiles {
		if fi, err := os.Stat(filepath.Join(dir, rel)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (empty or missing)", rel, err)
		}
	}

	cfg, err := config.Load(dir, nil)
	if err != nil {
		t.Fatalf("config.Load of the scaffold: %v", err)
	}
	lane, err := cfg.Lane(dir, "")
	if err != nil {
		t.Fatalf("Lane: %v", err)
	}
	if lane.Project != filepath.Base(dir) || lane.Executors.Default != "local" || lane.Name != "main" {
		t.Errorf("lane project %q executor %q name %q", lane.Project, lane.Executors.Default, lane.Name)
	}

	// Every default role prompt path holds a usable standing prompt.
	for _, p := range []string{
		lane.Roles.ContQaRolePromptPath, lane.Roles.ContEvalRolePromptPath,
		lane.Roles.IntegrationRolePromptPath, lane.Roles.DocumentationRolePromptPath,
		lane.Roles.SecurityRolePromptPath, lane.Roles.DesignRolePromptPath,
	} {
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Errorf("role prompt %s: %v", p, err)
			continue
		}
		sp, err := wave.StandingPrompt(string(b))
		if err != nil || strings.TrimSpace(sp) == "" {
			t.Errorf("role prompt %s: standing prompt %q, %v", p, sp, err)
		}
	}
}

// The scaffolded wave 0 parses and passes validation under the
// scaffolded config, so `doctor` and `launch --dry-run` accept it.
func TestScaffoldedWaveValidates(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, false); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	lane, err := cfg.Lane(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	opts := wave.Options{Roles: lane.Roles}
	waves, err := wave.LoadDir(dir, lane.WavesDir, opts)
	if err != nil {
		t.Fatalf("LoadDir: %v", err)
	}
	if err := wave.Validate(waves, lane, opts); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if len(waves) != 1 || waves[0].Number != 0 {
		t.Fatalf("waves = %d, want wave 0 only", len(waves))
	}
	var ids []string
	for _, a := range waves[0].Agents {
		ids = append(ids, a.ID)
		if a.Executor == nil || a.Executor.ID == nil || *a.Executor.ID != "local" {
			t.Errorf("agent %s: executor is not local", a.ID)
		}
	}
	if want := []string{"A1", "A2", "A8", "A9", "A0"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("agents = %q, want %q", ids, want)
	}
}

func TestWriteRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, false); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "wave.config.yaml")
	if err := os.WriteFile(cfgPath, []byte("defaultLane: mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Write(dir, false)
	var ee *ExistsError
	if !errors.As(err, &ee) {
		t.Fatalf("second Write: err = %v, want *ExistsError", err)
	}
	if !reflect.DeepEqual(ee.Files, wantFiles) {
		t.Errorf("ExistsError.Files = %q, want %q", ee.Files, wantFiles)
	}
	if !strings.Contains(err.Error(), "wave.config.yaml") || !strings.Contains(err.Error(), "docs/plans/waves/wave-0.md") {
		t.Errorf("error %q does not name the files", err)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != "defaultLane: mine\n" {
		t.Errorf("refused Write still changed wave.config.yaml: %q", b)
	}

	// One existing file is enough to refuse, and nothing is written.
	dir2 := t.TempDir()
	agents := filepath.Join(dir2, "docs", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, "wave-security-role.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir2, false); !errors.As(err, &ee) || !reflect.DeepEqual(ee.Files, []string{"docs/agents/wave-security-role.md"}) {
		t.Errorf("err = %v, want ExistsError naming only the security prompt", err)
	}
	if _, err := os.Stat(filepath.Join(dir2, "wave.config.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("refused Write created wave.config.yaml (stat err %v)", err)
	}

	if _, err := Write(dir, true); err != nil {
		t.Fatalf("Write with force: %v", err)
	}
	if b, _ := os.ReadFile(cfgPath); !strings.Contains(string(b), "default: local") {
		t.Errorf("forced Write did not restore wave.config.yaml: %q", b)
	}
}

func TestGitignore(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		changed             bool
	}{
		{"missing", "", ".wave/\n", true},
		{"appends with newline", "node_modules", "node_modules\n.wave/\n", true},
		{"keeps content", "bin/\n", "bin/\n.wave/\n", true},
		{"already there", "bin/\n.wave/\n", "bin/\n.wave/\n", false},
		{"equivalent form", "/.wave\n", "/.wave\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, ".gitignore")
			if tc.before != "" {
				if err := os.WriteFile(p, []byte(tc.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			written, err := Write(dir, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(written, ".gitignore"); got != tc.changed {
				t.Errorf(".gitignore reported written = %v, want %v", got, tc.changed)
			}
			b, _ := os.ReadFile(p)
			if string(b) != tc.after {
				t.Errorf(".gitignore = %q, want %q", b, tc.after)
			}
			// Forcing a second scaffold never duplicates the line.
			if _, err := Write(dir, true); err != nil {
				t.Fatal(err)
			}
			if b2, _ := os.ReadFile(p); string(b2) != tc.after {
				t.Errorf("after forced rewrite .gitignore = %q, want %q", b2, tc.after)
			}
		})
	}
}

// A repo directory whose name needs quoting still yields a loadable config.
func TestProjectNameIsQuoted(t *testing.T) {
	dir := filepath.Join(t.TempDir(), `odd: "name" #1`)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, false); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ProjectName != `odd: "name" #1` {
		t.Errorf("ProjectName = %q", cfg.ProjectName)
	}
}

// The demo wave, copied as a later wave (as a user grows the repository),
// still validates under init's config: the config leaves on no rule its
// own demo breaks from some wave on.
func TestTheDemoWaveValidatesAtEveryWaveNumberUnderInitsConfig(t *testing.T) {
	dir := t.TempDir()
	if _, err := Write(dir, false); err != nil {
		t.Fatal(err)
	}
	demo, err := os.ReadFile(filepath.Join(dir, "docs/plans/waves/wave-0.md"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	lane, err := cfg.Lane(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	opts := wave.Options{Roles: lane.Roles, ReadFile: func(rel string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, rel)) }}
	for _, n := range []int{1, 6, 12} {
		text := strings.NewReplacer("wave-0", fmt.Sprintf("wave-%d", n), "Wave 0", fmt.Sprintf("Wave %d", n), "wave 0", fmt.Sprintf("wave %d", n)).Replace(string(demo))
		name := fmt.Sprintf("docs/plans/waves/wave-%d.md", n)
		w, err := wave.Parse(name, []byte(text), opts)
		if err != nil {
			t.Fatalf("wave %d: %v", n, err)
		}
		if err := wave.Validate([]*wave.Wave{w}, lane, opts); err != nil {
			t.Errorf("the demo as wave %d breaks init's config:\n%v", n, err)
		}
	}
}
