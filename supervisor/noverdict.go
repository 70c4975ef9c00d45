package supervisor

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/gitops"
)

// A verify of the merge train that ends with no verdict — its scratch
// checkout of the merge commit could not be made, so backlog.verify
// never ran — says nothing of the change, and is tried again. Its cause
// may never pass: a worker's commit holding a file name the filesystem
// cannot hold (git's checks accept one, a checkout cannot write it).
// So the tries are spaced out (Options.Backoff), and a candidate whose
// verify ended so maxNoVerdict times at the same worker commit is parked
// saying why; the train goes on without it (docs/merge-gate.md, "No
// verdict").

// maxNoVerdict is how many verifies of one worker commit, merged on the
// wave tip alone, may end with no verdict before its issue is parked.
const maxNoVerdict = 5

// parking is the park a slot's job makes of its issue.
type parking struct {
	detail, question string
}

// noVerdict takes up a verify of sl's merge (c) that ended with no
// verdict (err), on the loop; sl is stale already. A full disk, as the
// system call that failed says it, is the run's, waited out as every
// transient failure is (the error goes to ride): it counts against no
// candidate. git's words are not asked (transientCause): its stderr
// quotes the worker's file names, which can spell any cause. Otherwise
// the slot is verified again after a backoff, and the try counts when
// the merge was built on the wave tip alone (with candidates ahead in
// it, the checkout may have failed on theirs). The maxNoVerdict-th
// counted try parks the issue.
func (s *Supervisor) noVerdict(sl *slot, c gitops.Candidate, on verifyOn, err error) (*parking, error) {
	n := sl.n
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return nil, fmt.Errorf("verify #%d: %w", n, err)
	}
	if sl.tip != c.Worker {
		sl.tip, sl.tries, sl.counted = c.Worker, 0, 0
	}
	why := oneLine(err.Error())
	counted := len(on.ahead) == 0
	if counted {
		sl.counted++
	}
	if sl.counted >= maxNoVerdict {
		s.printf("#%d: its verify at %s did not start (%s): %d tries without a verdict; parking it", n, short(c.Commit), why, sl.counted)
		return &parking{
			detail: fmt.Sprintf("its merge of %s could not be verified: %d verifies ended with no verdict; the last: %s",
				short(c.Worker), sl.counted, why),
			// The whole error (one line, cleaned): the cause is at its
			// end, after git's command and the names it quotes.
			question: fmt.Sprintf("The verify of #%d's merge never ran: %d times its scratch checkout (the merge of the worker's commit %s, last as %s) could not be made. The last error: %s. Fix the cause (the worker's commit, or this machine), then run #%d again?",
				n, sl.counted, c.Worker, c.Commit, strings.Join(strings.Fields(backlog.Clean(err.Error())), " "), n),
		}, nil
	}
	wait := s.o.Backoff(sl.tries)
	sl.tries++
	sl.retryAt = s.o.Now().Add(wait)
	count := fmt.Sprintf("%d of %d", sl.counted, maxNoVerdict)
	if !counted {
		count = "not counted: built" + onTopOf(on.ahead)
	}
	s.printf("#%d: its verify at %s did not start (%s); trying again in %s (%s)", n, short(c.Commit), why, wait, count)
	return nil, nil
}

// backingOff: sl's verify ended with no verdict and its next try is not
// due yet.
func (s *Supervisor) backingOff(sl *slot) bool {
	return sl.state == slotStale && s.o.Now().Before(sl.retryAt)
}
