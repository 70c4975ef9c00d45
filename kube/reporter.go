package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/wave-orchestrator/wave-orchestrator/runtime"
)

// finalReport is a runner's termination message: its terminal record and
// status, the facts it writes to runtime.json and status.json on a tmux
// run.
type finalReport struct {
	Record runtime.Record `json:"record"`
	Status runtime.Status `json:"status"`
}

// FinalFile is the runner's final report in the run directory (a
// finalReport): written by the runner only, read by the mirror.
const FinalFile = runtime.FinalFile

// readFinal is the runner's final report in runDir, if it wrote one for
// runID.
func readFinal(runDir, runID string) (*finalReport, bool) {
	b, err := os.ReadFile(filepath.Join(runDir, FinalFile))
	if err != nil {
		return nil, false
	}
	fr, ok := parseTermination(string(b), runID)
	return &fr, ok
}

// maxTerminationMessage is the kubelet's limit on a termination message.
const maxTerminationMessage = 4096

// Reporter is the runner's side in a pod: every record renews the run's
// Lease (one PATCH, the record in an annotation), and the final one goes
// to the container's termination message, which the kubelet copies into
// the pod's status. Loads its client config the usual way.
type Reporter struct {
	c         *Client
	namespace string
	name      string
	holder    string
	duration  int32
	termPath  string
	// finalPath is the final report's file in the run directory, on the
	// workspace the launcher shares: it outlives the Job, its pod and its
	// Lease (ttlSecondsAfterFinished), which a launcher away for longer
	// than that would otherwise find gone with the run's outcome.
	finalPath string
	now       func() time.Time
}

var _ runtime.Reporter = (*Reporter)(nil)

// NewReporter is the runtime.ReporterFunc of `agent-run`: nil for a run
// not started by the kubernetes backend.
func NewReporter(p *runtime.Payload) (runtime.Reporter, error) {
	k := p.Kubernetes
	if k == nil {
		return nil, nil
	}
	termPath := os.Getenv("WAVE_TERMINATION_LOG")
	c, err := NewClient("", "")
	if err != nil {
		return nil, leaveMessage(termPath, err)
	}
	r := newReporter(c, k, os.Getenv("WAVE_POD_NAME"), termPath)
	if p.RunDir != "" {
		r.finalPath = filepath.Join(p.RunDir, FinalFile)
	}
	// One renewal now: a runner that cannot renew its Lease (no rights,
	// no Lease) is invisible to its launcher, and should fail before it
	// starts the agent, saying why.
	if err := r.firstRenewal(p.DeadlineAt); err != nil {
		return nil, leaveMessage(r.termPath, err)
	}
	return r, nil
}

// leaseWait bounds how long a runner waits for a Lease that does not
// exist yet (the run's deadline, when sooner, bounds it too).
const leaseWait = 15 * time.Minute

// firstRenewal renews the Lease once. A Lease not there yet is waited
// for: a launcher that died between the run's Secret and its Lease left
// a pod that can run, and the launcher that adopts the run makes the
// Lease; failing here would fail a run whose agent never started.
func (r *Reporter) firstRenewal(deadline *time.Time) error {
	until := r.now().Add(leaseWait)
	if deadline != nil && deadline.Before(until) {
		until = *deadline
	}
	said := false
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), runtime.ReportTimeout)
		err := r.renew(ctx, nil)
		cancel()
		if err == nil || !apierrors.IsNotFound(err) {
			return err
		}
		if !r.now().Before(until) {
			return fmt.Errorf("%w (waited until %s for the launcher to make it)", err, until.Format(time.RFC3339))
		}
		if !said {
			fmt.Fprintf(os.Stderr, "agent-run: lease %s/%s does not exist yet; waiting for the launcher to make it\n", r.namespace, r.name)
			said = true
		}
		time.Sleep(wait)
	}
}

// leaveMessage writes a runner's start failure as its termination
// message, where the launcher reads it, and returns err.
func leaveMessage(path string, err error) error {
	if path == "" {
		path = terminationLog
	}
	msg := "agent-run: " + err.Error()
	if len(msg) > maxTerminationMessage {
		msg = msg[:maxTerminationMessage]
	}
	_ = os.WriteFile(path, []byte(msg), 0o644)
	return err
}

func newReporter(c *Client, k *runtime.KubeRun, holder, termPath string) *Reporter {
	if holder == "" {
		holder, _ = os.Hostname()
	}
	if termPath == "" {
		termPath = terminationLog
	}
	ns := k.Namespace
	if ns == "" {
		ns = os.Getenv("WAVE_POD_NAMESPACE")
	}
	return &Reporter{c: c, namespace: ns, name: k.Name, holder: holder,
		duration: int32(max(1, k.LeaseDurationSeconds)), termPath: termPath, now: time.Now}
}

// Report renews the Lease with rec.
func (r *Reporter) Report(ctx context.Context, rec runtime.Record) error {
	return r.renew(ctx, &rec)
}

// Final writes the termination message, then renews the Lease a last
// time: the message is what the launcher waits for, the Lease only says
// sooner what it will say.
func (r *Reporter) Final(ctx context.Context, rec runtime.Record, st runtime.Status) error {
	msg, err := terminationMessage(rec, st)
	if err != nil {
		return err
	}
	if r.finalPath != "" {
		// Best effort: a workspace the pod may not write leaves the
		// termination message, as before.
		if err := runtime.WriteJSON(r.finalPath, finalReport{Record: rec, Status: st}); err != nil {
			fmt.Fprintf(os.Stderr, "agent-run: final report %s: %v\n", r.finalPath, err)
		}
	}
	if err := os.WriteFile(r.termPath, msg, 0o644); err != nil {
		return fmt.Errorf("termination message: %w", err)
	}
	// The message is written; the Lease only says it sooner.
	_ = r.renew(ctx, &rec)
	return nil
}

// renew renews the Lease, with rec as its record unless nil.
func (r *Reporter) renew(ctx context.Context, rec *runtime.Record) error {
	now := metav1.NewMicroTime(r.now())
	patch := map[string]any{
		"spec": map[string]any{"holderIdentity": r.holder, "renewTime": now,
			"leaseDurationSeconds": r.duration},
	}
	if rec != nil {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		patch["metadata"] = map[string]any{"annotations": map[string]string{AnnotationRecord: string(b)}}
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = r.c.leases(r.namespace).Patch(ctx, r.name, types.MergePatchType, body, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("renew lease %s/%s: %w", r.namespace, r.name, err)
	}
	return nil
}

// terminationMessage encodes the final report within the kubelet's
// limit, shortening the one free-text field if it must.
func terminationMessage(rec runtime.Record, st runtime.Status) ([]byte, error) {
	for {
		b, err := json.Marshal(finalReport{Record: rec, Status: st})
		if err != nil {
			return nil, err
		}
		if len(b) <= maxTerminationMessage || rec.ExitReason == "" {
			return b, nil
		}
		rec.ExitReason = rec.ExitReason[:len(rec.ExitReason)/2]
	}
}

// parseTermination reads a termination message written by Final; ok is
// false for anything else (a runner that died before writing it, a
// message of something that is not our runner).
func parseTermination(msg, runID string) (finalReport, bool) {
	var fr finalReport
	if msg == "" || json.Unmarshal([]byte(msg), &fr) != nil {
		return fr, false
	}
	return fr, fr.Record.RunID == runID && fr.Record.TerminalDisposition != ""
}
