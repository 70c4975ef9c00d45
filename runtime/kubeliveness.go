package runtime

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// KubeFacts is what a kubernetes run's cluster says, as the kube backend
// saw it. Facts.Kube is nil when the cluster was not asked: then only the
// mirrored record speaks, and a stale one is not taken for a dead runner,
// since the launcher that mirrors it may just be down.
type KubeFacts struct {
	// Alive: the runner renewed its Lease within the Lease's duration, as
	// timed by this machine's clock (so clock skew with the node cannot
	// make a run lost), and its container has not terminated.
	Alive bool
	// Gone: neither the Job nor its pod exists.
	Gone bool
	// Detail says why a run is not alive (lease not renewed for 9s, pod
	// deleted, container killed, ...).
	Detail string
	// ExitCode and Signal are a container's that ended without a terminal
	// record of the runner's (killed, OOM).
	ExitCode *int
	Signal   string
	// Waiting is why the container has not started (ErrImagePull: ...).
	Waiting string
	// StartFailed is set when the container cannot start without a
	// change by the user (a bad image name, a missing secret).
	StartFailed string
	// Unreachable is set when the cluster could not be asked to confirm
	// a Lease that looks expired: this side may be the one cut off, so
	// nothing is decided until it answers.
	Unreachable string
}

// classifyKube decides a kubernetes run whose record is not terminal and
// which has no status file.
func classifyKube(f Facts) Verdict {
	rec, k := f.Record, f.Kube
	launching := rec.TerminalDisposition == Launching
	v := Verdict{State: StateRunning}
	if launching {
		v.State = StateLaunching
	}
	deadline := func(v Verdict) Verdict {
		if f.Deadline != nil && !f.Now.Before(*f.Deadline) {
			v.Terminate, v.Reason = true, "deadline passed"
		}
		return v
	}
	if k == nil {
		if _, every, stale := heartbeatStale(rec, f.Now); stale && !launching {
			age := f.Now.Sub(rec.LastHeartbeatAt).Round(time.Second)
			v.Warnings = append(v.Warnings, fmt.Sprintf("kubernetes run last mirrored %s ago (heartbeat %s): is its launcher running?", age, every))
		}
		return deadline(v)
	}
	if k.Waiting != "" {
		v.Warnings = append(v.Warnings, "pod waiting: "+k.Waiting)
	}
	sinceStart := f.Now.Sub(rec.StartedAt)
	switch {
	case k.Alive:
		return deadline(v)
	case k.Unreachable != "":
		v.Warnings = append(v.Warnings, "cluster unreachable, liveness unknown: "+k.Unreachable)
		return deadline(v)
	case k.ExitCode != nil:
		return Verdict{State: StateLost, Done: true, ExitCode: k.ExitCode, Signal: k.Signal,
			Reason: "runner lost: " + k.Detail}
	case launching && k.StartFailed != "" && sinceStart > f.LaunchGrace:
		return Verdict{State: StateFailed, Done: true, Reason: "pod could not start: " + k.StartFailed, Terminate: !k.Gone}
	case launching && k.Gone && sinceStart > f.LaunchGrace:
		return Verdict{State: StateLost, Done: true, Reason: "job gone before its runner reported: " + k.Detail}
	case launching:
		// Scheduling, pulling the image, starting the runner.
		return deadline(v)
	}
	// A runner that stopped renewing may still run on a node cut off from
	// the cluster: have it deleted before a retry runs beside it.
	return Verdict{State: StateLost, Done: true, Terminate: !k.Gone,
		Reason: "runner lost without a terminal record: " + k.Detail}
}

// ObserveKube observes a kubernetes run: its files (which the kube
// backend's mirror keeps) and, for a record that is not yet final, what
// facts says of it.
func ObserveKube(runDir string, now time.Time, grace time.Duration, facts func(*Record) *KubeFacts) Observation {
	obs := Observation{RunDir: runDir, RunID: filepath.Base(runDir)}
	f := Facts{Now: now, LaunchGrace: grace}
	_, payloadErr := takeLaunchFacts(readLaunchFile, runDir, &obs, &f)
	fileErr := readRunFiles(runDir, &f, now)
	if rec := f.Record; rec != nil && !isTerminal(rec.TerminalDisposition) && f.Status == nil && facts != nil {
		f.Kube = facts(rec)
	}
	obs.Record, obs.Status = f.Record, f.Status
	if obs.Record != nil && obs.Record.RunID != "" {
		obs.RunID = obs.Record.RunID
	}
	obs.Err = errors.Join(payloadErr, fileErr)
	obs.Verdict = Classify(f)
	return obs
}

// LaunchingRecord is the record a backend writes before its runner starts.
func LaunchingRecord(p *Payload, now time.Time) Record { return launchingRecord(p, now) }
