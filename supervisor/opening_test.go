package supervisor

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// TestWaveBranchNameTakenMovesToTheNextSuffix: a name whose branch exists
// (made by a person) and a name another run has reserved are both passed
// over; the run cuts the next one, leaves theirs alone and no reservation
// of its own behind.
func TestWaveBranchNameTakenMovesToTheNextSuffix(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.issue(1, "One", "Files: a/**")
	wave := "wave/" + time.Now().UTC().Format("2006-01-02") + "-t"
	main := git(t, f.root, "rev-parse", "HEAD")
	git(t, f.root, "push", "-q", "origin", "HEAD:refs/heads/"+wave)
	git(t, f.root, "push", "-q", "origin", "HEAD:refs/heads/wave-names/"+wave+"-2")
	res := f.run(1)
	if res.err != nil || res.ExitCode != exitcode.OK {
		t.Fatalf("run: exit %d, %v", res.ExitCode, res.err)
	}
	r, _, _ := runlog.Read(res.Dir)
	if r.Info.WaveBranch != wave+"-3" {
		t.Fatalf("wave branch %s, want %s-3", r.Info.WaveBranch, wave)
	}
	refs := f.originBranches()
	for _, want := range []string{"refs/heads/" + wave, "refs/heads/wave-names/" + wave + "-2", "refs/heads/" + wave + "-3"} {
		if !slices.Contains(refs, want) {
			t.Errorf("origin lacks %s: %v", want, refs)
		}
	}
	for _, ref := range refs {
		if strings.HasPrefix(ref, "refs/heads/wave-names/") && ref != "refs/heads/wave-names/"+wave+"-2" {
			t.Errorf("a reservation of this run is left on origin: %s", ref)
		}
	}
	if got := git(t, f.origin, "rev-parse", "refs/heads/"+wave); got != main {
		t.Errorf("the person's branch moved to %s", got)
	}
}
