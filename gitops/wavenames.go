package gitops

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// A wave branch is cut at the tip of base, so the branch alone cannot say
// which run made it: two runs cutting the same name from the same tip
// push the same value. Each run therefore first reserves the name with a
// ref of its own making under waveNamePrefix, pointing at a commit only
// it has (its run id and the time are in the message). The run records
// that commit before pushing it, so after a crash it can tell "mine, from
// before" (the ref is at the recorded commit) from "someone else's".
const waveNamePrefix = "refs/heads/wave-names/"

func waveNameRef(wave string) string { return waveNamePrefix + wave }

// WaveNameCommit writes, in the clone only, the commit with which run
// reserves the name wave (see ReserveWaveName).
func (r *Repo) WaveNameCommit(ctx context.Context, wave, run string) (string, error) {
	if err := r.checkBranch(ctx, wave); err != nil {
		return "", err
	}
	if strings.ContainsFunc(run, isControl) {
		return "", fmt.Errorf("wave name %s: run id %q contains a control character", sanitize(wave), run)
	}
	msg := fmt.Sprintf("wave-orchestrator reserves the wave branch name %s\n\nrun: %s\nat: %s\n", wave, run,
		time.Now().UTC().Format(time.RFC3339Nano))
	sha, err := r.claimCommit(ctx, msg)
	if err != nil {
		return "", fmt.Errorf("wave name %s: %w", sanitize(wave), err)
	}
	return sha, nil
}

// ReserveWaveName creates the reservation of wave on the remote at commit,
// only if there is none (compare-and-swap on an absent ref). held reports
// that the remote's reservation is at commit now; fresh, that this call
// made it (no earlier push of commit had landed). A fresh reservation of
// a name whose branch already exists means that branch is not ours.
func (r *Repo) ReserveWaveName(ctx context.Context, wave, commit string) (held, fresh bool, err error) {
	if err := r.checkBranch(ctx, wave); err != nil {
		return false, false, err
	}
	if commit == "" || strings.HasPrefix(commit, "-") {
		return false, false, fmt.Errorf("reserve wave name %s: invalid commit %q", sanitize(wave), commit)
	}
	ref := waveNameRef(wave)
	res, err := r.push(ctx, true, ref+":", commit+":"+ref)
	if err != nil {
		return false, false, fmt.Errorf("reserve wave name %s: push %s: %w", sanitize(wave), ref, err)
	}
	switch res.flag {
	case '*':
		return true, true, nil
	case '=':
		return true, false, nil // an earlier push of this very commit landed
	}
	now, ok, err := r.lsRemote(ctx, ref)
	if err != nil {
		return false, false, fmt.Errorf("reserve wave name %s: %w", sanitize(wave), err)
	}
	return ok && now == commit, false, nil
}

// FreeWaveName deletes the reservation of wave if it is still at commit;
// an absent or foreign reservation is left as it is (nil).
func (r *Repo) FreeWaveName(ctx context.Context, wave, commit string) error {
	if err := r.checkBranch(ctx, wave); err != nil {
		return err
	}
	if commit == "" || strings.HasPrefix(commit, "-") {
		return fmt.Errorf("free wave name %s: invalid commit %q", sanitize(wave), commit)
	}
	ref := waveNameRef(wave)
	now, ok, err := r.lsRemote(ctx, ref)
	if err != nil || !ok || now != commit {
		if err != nil {
			err = fmt.Errorf("free wave name %s: %w", sanitize(wave), err)
		}
		return err
	}
	if _, err := r.push(ctx, true, ref+":"+commit, ":"+ref); err != nil {
		return fmt.Errorf("free wave name %s: %w", sanitize(wave), err)
	}
	return nil
}
