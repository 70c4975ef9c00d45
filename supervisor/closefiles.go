package supervisor

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/forge"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// closeIssueFiles writes `state: closed` into the front matter of every
// merged issue's file, as a commit on the wave branch (local source):
// the overlay under .wave/ is this clone's alone, but the wave branch is
// everyone's, so merging the final PR closes the issues for every clone.
// The edits are read from the wave branch itself, so a resumed end does
// nothing twice. It never holds the final PR back: a failure is a
// warning, and the next `backlog run` of an unfinished end tries again.
func (s *Supervisor) closeIssueFiles(ctx context.Context) {
	if s.o.Source.Kind() != forge.KindLocal || s.run().Foreign != nil {
		return // never a commit on top of one the run did not make
	}
	var merged []int
	for _, is := range s.run().List() {
		if is.State == backlog.StateMerged {
			merged = append(merged, is.Number)
		}
	}
	if len(merged) == 0 {
		return
	}
	dir := strings.TrimPrefix(path.Clean(filepath.ToSlash(s.o.Config.Backlog.LocalDir)), "./")
	names, err := s.o.Git.FilesAt(ctx, s.waveRef(), dir)
	if err != nil {
		s.printf("warning: issue files on %s: %v", s.run().Info.WaveBranch, err)
		return
	}
	var paths, closed []string
	for _, p := range names {
		if n, ok := forge.IssueFileNumber(path.Base(p)); ok && slices.Contains(merged, n) && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
			closed = append(closed, "#"+strconv.Itoa(n))
		}
	}
	if len(paths) == 0 {
		return // the issue files are not committed: nothing another clone could see
	}
	// No closing keyword in the message: on a GitHub-hosted repository
	// "Close #3" would close GitHub's issue 3 once this reaches the default branch.
	msg := fmt.Sprintf("Mark merged issues %s closed in %s\n\nBacklog run %s merged them into this branch.",
		strings.ReplaceAll(strings.Join(closed, ", "), "#", ""), dir, s.run().Info.ID)
	res, err := s.o.Git.CommitEdits(ctx, s.run().Info.WaveBranch, s.run().WaveTip, msg, paths, func(p string, old []byte) ([]byte, bool, error) {
		out, changed, err := forge.CloseInFrontMatter(old)
		if err != nil {
			s.printf("warning: %s on %s is left as it is: %v", p, s.run().Info.WaveBranch, err)
			return old, false, nil
		}
		return out, changed, nil
	})
	if fe, ok := gitops.IsForeignCommit(err); ok {
		if err := s.foreignCommit(fe); err != nil {
			s.printf("warning: %v", err)
		}
		return
	}
	if err != nil {
		s.printf("warning: mark the merged issues closed on %s: %v", s.run().Info.WaveBranch, err)
		return
	}
	if res.Tip != "" && res.Tip != s.run().WaveTip {
		if err := s.emit(backlog.Event{Kind: backlog.EvIssuesClosed, Commit: res.Commit, Tip: res.Tip}); err != nil {
			s.printf("warning: %v", err)
		}
	}
	if res.Commit != "" {
		s.printf("issue files of %s marked `state: closed` on %s (%s): merging the final PR closes them for every clone",
			strings.Join(closed, ", "), s.run().Info.WaveBranch, short(res.Commit))
	}
}
