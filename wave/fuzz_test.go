package wave

import (
	"os"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/config"
)

// FuzzParse: no input makes Parse or Validate panic, and a parsed wave
// always has a slug and owned paths consistent with its prompt.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("testdata/wave-3.md"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(base))
	f.Add([]byte("## Agent A1: x\n### Prompt\n````\n```\n## Agent A2: y\n"))
	read := roleDocs(nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := Parse("docs/plans/waves/wave-1.md", b, Options{ReadFile: read})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, a := range w.Agents {
			if a.Slug == "" && Slugify("1-"+a.ID) != "" {
				t.Fatalf("agent %q lost its slug", a.ID)
			}
		}
		zero := 0
		_ = Validate([]*Wave{w}, &config.Lane{Validation: config.Validation{RequireExitContractsFromWave: &zero, RequiredPromptReferences: []string{"x"}}}, Options{ReadFile: read})
	})
}
