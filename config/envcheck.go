package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// runEnv are the WAVE_* variables that are not configuration keys: the
// repository root override and the identity the runner gives each agent
// (read back by `coord post`).
var runEnv = []string{
	"WAVE_REPO_ROOT",
	"WAVE_LANE", "WAVE_NUMBER", "WAVE_AGENT_ID", "WAVE_ATTEMPT", "WAVE_RUN_DIR",
	"WAVE_ORCHESTRATOR_ID", "WAVE_EXECUTOR", "WAVE_EXECUTOR_MODE", "WAVE_PROMPT_FILE",
	"WAVE_ANSWERED", "WAVE_ANSWERS_FILE",
}

// KnownEnv lists every WAVE_* variable wave-orchestrator reads.
func KnownEnv() []string {
	out := slices.Clone(runEnv)
	for _, ev := range envVars() {
		out = append(out, ev.Name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// UnknownEnv returns a warning for each WAVE_* variable in environ (as
// os.Environ returns it) that nothing reads — most often a misspelt key,
// which would otherwise be ignored in silence — with the nearest known
// name when one is close.
func UnknownEnv(environ []string) []string {
	known := KnownEnv()
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "WAVE_") || slices.Contains(known, name) {
			continue
		}
		if strings.IndexFunc(name, func(r rune) bool {
			return !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}) >= 0 {
			name = strconv.Quote(name)
		}
		w := fmt.Sprintf("environment variable %s is not a wave-orchestrator setting and is ignored", name)
		if best := nearest(name, known); best != "" {
			w += "; did you mean " + best + "?"
		}
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// nearest is the candidate closest to s by edit distance, if it is close
// enough to be a likely typo (at most a quarter of s's length, min 2).
func nearest(s string, candidates []string) string {
	best, bestD := "", max(2, len(s)/4)+1
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes: the
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
