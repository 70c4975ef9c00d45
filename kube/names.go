package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Labels and annotations on every object of a run.
const (
	LabelInstance = "wave-orchestrator.dev/instance"
	LabelLane     = "wave-orchestrator.dev/lane"
	LabelWave     = "wave-orchestrator.dev/wave"
	LabelAgent    = "wave-orchestrator.dev/agent"
	LabelRun      = "wave-orchestrator.dev/run"
	// AnnotationAgentID keeps the agent id as written: label values
	// allow fewer characters.
	AnnotationAgentID = "wave-orchestrator.dev/agent-id"
	// AnnotationRunID is the run id as written.
	AnnotationRunID = "wave-orchestrator.dev/run-id"
	// AnnotationRecord on a run's Lease is the runner's last record.
	AnnotationRecord = "wave-orchestrator.dev/record"
	// AnnotationStopped on a run's Lease marks a run stopped on request.
	AnnotationStopped = "wave-orchestrator.dev/stopped"
)

// Container is the name of the agent's container in its pod.
const Container = "agent"

// Instance identifies one lane of one repository among everything in a
// namespace: two checkouts may run the same lane against one cluster.
func Instance(repoRoot, lane string) string {
	h := sha256.Sum256([]byte(repoRoot + "\x00" + lane))
	return hex.EncodeToString(h[:6])
}

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// ObjectName is the name of a run's Job, Secret and Lease: readable
// (wave-<lane>-<run>), unique per instance and run through a hash, and a
// DNS-1123 label of at most 63 characters whatever the lane and run id.
func ObjectName(instance, runID string) string {
	h := sha256.Sum256([]byte(instance + "\x00" + runID))
	suffix := hex.EncodeToString(h[:4])
	base := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(runID), "-"), "-")
	// "wave-" + base + "-" + 8 hex; the pod name adds "-xxxxx" to the
	// Job's, and must stay within 63 too.
	if max := 63 - 6 - len("wave--") - len(suffix); len(base) > max {
		base = strings.TrimRight(base[:max], "-")
	}
	if base == "" {
		return "wave-" + suffix
	}
	return "wave-" + base + "-" + suffix
}

var notLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// LabelValue makes s a valid label value (at most 63 characters of
// [A-Za-z0-9._-], starting and ending alphanumeric).
func LabelValue(s string) string {
	v := notLabel.ReplaceAllString(s, "_")
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "._-")
}
