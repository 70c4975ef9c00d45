package gitops

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ClaimInfo is who holds an issue: the content of a claim commit's message.
// SHA is the claim commit (filled when read back or won).
type ClaimInfo struct {
	Issue int
	RunID string
	Host  string
	PID   int
	Lease time.Time // lease expiry
	SHA   string
}

// claimMessage is the claim commit's message: a title line, then one
// "key: value" line per field. Values are single-line by construction.
func claimMessage(c ClaimInfo) (string, error) {
	if c.Issue <= 0 {
		return "", fmt.Errorf("claim: issue number %d is not positive", c.Issue)
	}
	for name, v := range map[string]string{"run id": c.RunID, "host": c.Host} {
		if strings.ContainsFunc(v, isControl) {
			return "", fmt.Errorf("claim #%d: %s %q contains a control character", c.Issue, name, v)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "wave-orchestrator claim for issue #%d\n\n", c.Issue)
	fmt.Fprintf(&b, "issue: %d\nrun: %s\nhost: %s\npid: %d\n", c.Issue, c.RunID, c.Host, c.PID)
	if !c.Lease.IsZero() {
		fmt.Fprintf(&b, "lease: %s\n", c.Lease.UTC().Format(time.RFC3339Nano))
	}
	return b.String(), nil
}

// parseClaim reads a claim commit message found at ref (which names issue).
// Unknown keys are ignored so later versions can add fields.
func parseClaim(ref string, issue int, sha, msg string) (ClaimInfo, error) {
	c := ClaimInfo{SHA: sha}
	bad := func(format string, a ...any) (ClaimInfo, error) {
		return ClaimInfo{}, fmt.Errorf("%w at %s (%s): %s", ErrBadClaim, ref, short(sha), fmt.Sprintf(format, a...))
	}
	seen := false
	for _, l := range strings.Split(msg, "\n") {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		var err error
		switch strings.TrimSpace(k) {
		case "issue":
			c.Issue, err = strconv.Atoi(v)
			seen = true
		case "run":
			c.RunID = v
		case "host":
			c.Host = v
		case "pid":
			c.PID, err = strconv.Atoi(v)
		case "lease":
			c.Lease, err = time.Parse(time.RFC3339Nano, v)
		}
		if err != nil {
			return bad("field %s: %q is not valid", sanitize(k), v)
		}
	}
	switch {
	case !seen:
		return bad("no \"issue:\" line")
	case c.Issue != issue:
		return bad("message says issue %d", c.Issue)
	}
	return c, nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
