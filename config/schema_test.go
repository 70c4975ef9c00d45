package config

import (
	"fmt"
	"strings"
	"testing"
)

// A key set twice in one mapping is an error at the second naming the
// first, never the last one silently winning: at the top, in a section,
// in a map and in a reference JSON file.
func TestAKeySetTwiceIsAnErrorNamingBothLines(t *testing.T) {
	for _, tc := range []struct {
		name, file, body string
		want             string // after the directory
	}{
		{"top level", "wave.config.yaml", "defaultLane: main\nprojectName: a\ndefaultLane: ops\n",
			"wave.config.yaml:3: defaultLane: duplicate key: also set at %s/wave.config.yaml:1; keep one"},
		{"in a section", "wave.config.yaml", "runtime:\n  timeoutMinutes: 30\n  silenceMinutes: 5\n  timeoutMinutes: 300\n",
			"wave.config.yaml:4: runtime.timeoutMinutes: duplicate key: also set at %s/wave.config.yaml:2; keep one"},
		{"in a map", "wave.config.yaml", "executors:\n  claude:\n    env:\n      A: x\n      A: y\n",
			"wave.config.yaml:5: executors.claude.env.A: duplicate key: also set at %s/wave.config.yaml:4; keep one"},
		{"in JSON", "wave.config.json", "{\n  \"runtime\": {\"timeoutMinutes\": 30},\n  \"runtime\": {\"timeoutMinutes\": 5}\n}\n",
			"wave.config.json:3: runtime: duplicate key: also set at %s/wave.config.json:2; keep one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := repoWith(t, map[string]string{tc.file: tc.body})
			_, err := Load(dir, nil)
			if want := fmt.Sprintf(tc.want, dir); err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("err %v\nwant %q", err, want)
			}
		})
	}
}
