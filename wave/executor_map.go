package wave

import (
	"fmt"
	"slices"
	"strings"
)

// ParseExecutorMap reads executor settings given as a flat map of the
// `### Executor` keys (backlog.executor in wave.config.yaml), with the
// same key set and value rules as a wave file. Problems are returned all
// at once, each naming its key.
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
		set, ok := executorKeys[key]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: unknown executor key (rule unknown-executor-key)", key))
		case val == "":
			errs = append(errs, fmt.Errorf("%s: empty value (rule empty-executor-value)", key))
		default:
			if err := set(c, key, val); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", key, err))
				continue
			}
			c.Keys = append(c.Keys, key)
		}
	}
	return c, errs
}
