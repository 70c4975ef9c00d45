package launcher

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/executor"
	"github.com/wave-orchestrator/wave-orchestrator/internal/redact"
	"github.com/wave-orchestrator/wave-orchestrator/internal/termtext"
	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
	"github.com/wave-orchestrator/wave-orchestrator/lanes"
	"github.com/wave-orchestrator/wave-orchestrator/manifest"
	"github.com/wave-orchestrator/wave-orchestrator/roles"
	"github.com/wave-orchestrator/wave-orchestrator/runtime"
	"github.com/wave-orchestrator/wave-orchestrator/wave"
)

// Preview is launch.json in dry-run: the payload the runner would get
// (secrets redacted) plus the resolved executor.
type Preview struct {
	runtime.Payload
	ExecutorResolved executor.Resolved `json:"executorResolved"`
	DeadlineMinutes  int               `json:"deadlineMinutes"`
	Overlays         []string          `json:"overlays"`
}

// DryRun writes every selected agent's prompt.md and launch.json under the
// lane's dry-run tree and returns the manifest of all waves. It starts
// nothing.
func (l *Launcher) DryRun() (manifest.Manifest, error) {
	sel, err := l.selectWaves()
	if err != nil {
		return manifest.Manifest{}, err
	}
	dry := l.opt.Layout.DryRun()
	if err := os.RemoveAll(dry.StateDir); err != nil {
		return manifest.Manifest{}, err
	}
	plans := map[int]*wavePlan{}
	for _, w := range l.opt.Waves {
		p, err := plan(w, l.opt.Lane, l.opt.Executor, "")
		if err != nil {
			return manifest.Manifest{}, err
		}
		plans[w.Number] = p
	}
	for _, w := range sel {
		p := plans[w.Number]
		r := &waveRun{l: &Launcher{opt: l.opt, now: l.now, log: l.log}, p: p, n: w.Number}
		r.l.opt.Layout = dry
		for _, id := range p.Order {
			pl, err := r.payload(id, 1)
			if err != nil {
				return manifest.Manifest{}, err
			}
			if err := redactFiles(pl.PrivateFiles); err != nil {
				return manifest.Manifest{}, err
			}
			prev := Preview{Payload: runtime.Redacted(*pl), ExecutorResolved: p.Agents[id].Resolved}
			if pl.DeadlineAt != nil {
				prev.DeadlineMinutes = int(time.Until(*pl.DeadlineAt).Round(60e9).Minutes())
			}
			prev.DeadlineAt = nil
			if err := writeRedacted(filepath.Join(pl.RunDir, lanes.LaunchFile), prev); err != nil {
				return manifest.Manifest{}, err
			}
			fmt.Fprintln(l.opt.Out, termtext.EscapeLines(fmt.Sprintf("[dry-run] wave %d %s: %s %v", w.Number, id, pl.ExecutorID, pl.Argv)))
		}
	}
	m := manifest.Build(l.opt.Waves,
		func(w *wave.Wave) roles.Bindings { return plans[w.Number].Bindings },
		func(w *wave.Wave, a *wave.Agent) any { return plans[w.Number].Agents[a.ID].Resolved })
	m.SetLane(l.opt.Lane.Name)
	m.Source = manifest.Source(l.opt.Lane.DocsDir)
	if docs, err := manifest.Docs(os.DirFS(l.opt.Lane.RepoRoot), l.opt.Lane.DocsDir); err == nil {
		m.Docs = docs
	}
	return m, nil
}

// writeRedacted writes v as indented JSON with every secret in it
// redacted (redact.JSON): a dry-run preview holds the resolved executor,
// whose settings and env may carry keys.
func writeRedacted(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if b, err = redact.JSON(append(b, '\n')); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return jsonfile.WriteFileAtomic(path, b, jsonfile.FileMode)
}

// redactFiles redacts the generated private files of a dry run (an
// opencode config may hold a provider's key): they are previews, which no
// agent reads.
func redactFiles(paths []string) error {
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if b, err = redact.JSON(b); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := jsonfile.WriteFileAtomic(p, b, jsonfile.FileMode); err != nil {
			return err
		}
	}
	return nil
}
