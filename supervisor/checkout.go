package supervisor

import (
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/supervisor/checkout"
)

// newCheckout is the one place a run's checkout (where its workers'
// files live: package checkout) is chosen. The wave branch is named once
// the run opened, hence the functions.
func (s *Supervisor) newCheckout() checkout.Checkout {
	if s.o.Lane.Runtime.UsesKubernetes() {
		return checkout.NewRemote(s.remoteOptions())
	}
	return checkout.NewLocal(checkout.LocalOptions{
		Git:  s.o.Git,
		Wave: func() string { return s.run().Info.WaveBranch },
		Tip:  func() string { return s.run().WaveTip },
		Kept: s.keptCheckout,
		Say:  s.printf,
	})
}

// remoteOptions are the run's pod checkouts: pods clone
// runtime.kubernetes.gitURL (else origin's URL) and snapshot every
// backlog.snapshotMinutes.
func (s *Supervisor) remoteOptions() checkout.RemoteOptions {
	return checkout.RemoteOptions{Git: s.o.Git, Wave: func() string { return s.run().Info.WaveBranch },
		RunID: func() string { return s.run().Info.ID }, URL: s.o.Lane.Runtime.Kubernetes.GitURL,
		Every: time.Duration(s.o.Config.Backlog.SnapshotMinutes) * time.Minute, Say: s.printf}
}

// pods: the run's workers each work in their own clone of origin
// (Kubernetes pods), not in worktrees of this clone.
func (s *Supervisor) pods() bool {
	_, ok := s.co.(*checkout.Remote)
	return ok
}
