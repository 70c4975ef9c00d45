package wave

import (
	"fmt"
	"slices"
	"strings"
)

// ParseExecutorMap reads executor settings given as a flat map of the
// `### Executor` keys (backlog.executor in wave.config.yaml), with the
// same keys (env.NAME included) and value rules as a wave file: both go
// through setExecutorKey. Problems are returned all at once, each naming
// its key.
func ParseExecutorMap(m map[string]string) (*ExecutorConfig, []error) {
	if len(m) == 0 {
		return nil, nil
	}
	c := &ExecutorConfig{Fallbacks: []string{}, Tags: []string{}}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, key := range keys {
		val := strings.TrimSpace(m[key])
		if key != "shell.command" {
			val = cleanExecutorValue(val)
		}
		if bv := setExecutorKey(c, key, val); bv != nil {
			errs = append(errs, fmt.Errorf("%s: %s (rule %s)", key, bv.msg, bv.rule))
		}
	}
	return c, errs
}
