package wave

import (
	"fmt"
	"strings"

	"regexp"
)

// fenceRe is the reference's prompt block: the first ``` (optional
// language) up to the next line that starts with ```.
var fenceRe = regexp.MustCompile("(?s)```(?:[a-zA-Z0-9_-]+)?\r?\n(.*?)\r?\n```")

// fencedBlock returns the trimmed text of the first fenced block in s.
func fencedBlock(s string) (string, bool) {
	m := fenceRe.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	return jsTrim(m[1]), true
}

var standingRe = regexp.MustCompile(`## Standing prompt[\r\n]+`)

// StandingPrompt extracts the fenced block after `## Standing prompt`
// from a role prompt document.
func StandingPrompt(roleDoc string) (string, error) {
	loc := standingRe.FindStringIndex(roleDoc)
	if loc == nil {
		return "", fmt.Errorf(`no "## Standing prompt" section`)
	}
	text, ok := fencedBlock(roleDoc[loc[1]:])
	if !ok {
		return "", fmt.Errorf(`"## Standing prompt" has no fenced block`)
	}
	return text, nil
}

// ComposePrompt joins the standing prompts and the local prompt with one
// blank line, skipping empty parts.
func ComposePrompt(standing []string, local string) string {
	parts := make([]string, 0, len(standing)+1)
	for _, s := range append(standing, local) {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

var (
	ownershipStartRe = regexp.MustCompile(`(?i)^\s*File ownership\b`)
	ownershipEndRe   = regexp.MustCompile(`^\s*[A-Za-z][A-Za-z0-9 _/-]*:\s*$`)
	ownedBulletRe    = regexp.MustCompile(`^\s*-\s+(.+?)\s*$`)
	quoteChars       = regexp.MustCompile("[`\"']")
)

// OwnedPaths reads the `File ownership` bullets of a local prompt: after a
// line starting "File ownership", every "- path" bullet until a line that
// is only a "Label:" heading. Backticks and quotes are stripped; a path
// ending in "/" owns a directory. Duplicates are dropped, order kept.
func OwnedPaths(prompt string) []string {
	out := []string{}
	seen := map[string]bool{}
	in := false
	for _, line := range splitLines(prompt) {
		if ownershipStartRe.MatchString(line) {
			in = true
			continue
		}
		if in && ownershipEndRe.MatchString(line) {
			in = false
		}
		if !in {
			continue
		}
		m := ownedBulletRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		p := jsTrim(quoteChars.ReplaceAllString(m[1], ""))
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// splitLines splits on \n or \r\n like the reference's split(/\r?\n/).
func splitLines(s string) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

var slugRe = regexp.MustCompile(`[^a-z0-9]+`)

// Slugify lowercases, turns runs of other characters into "-", trims "-"
// and keeps at most 48 characters: Slugify("0-A1") == "0-a1".
func Slugify(s string) string {
	s = slugRe.ReplaceAllString(strings.ToLower(s), "-")
	s = strings.Trim(s, "-")
	if len(s) > 48 {
		s = s[:48]
	}
	return s
}
