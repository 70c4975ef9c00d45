package supervisor

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/backlog/runlog"
	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
)

// fakeClaudeWorker stands for the claude CLI as a backlog worker: it
// commits inside its surface and prints its answer, the [backlog-result]
// marker last, in the output format it was asked for (claude's own event
// shapes, our words).
const fakeClaudeWorker = `#!/bin/sh
fmt=text
while [ $# -gt 0 ]; do
  case "$1" in --output-format) fmt=$2; shift ;; esac
  shift
done
mkdir -p a && echo "work for $WAVE_ISSUE_NUMBER" > "a/$WAVE_ISSUE_NUMBER.txt"
git add -A && git commit -q -m "issue $WAVE_ISSUE_NUMBER" || exit 3
answer='Committed the change.\n\n[backlog-result] state=done detail=\"landed a file\"'
case "$fmt" in
json)
  printf '%s\n' "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"$answer\",\"session_id\":\"s1\"}" ;;
stream-json)
  printf '%s\n' '{"type":"system","subtype":"init","session_id":"s1"}'
  printf '%s\n' "{\"type\":\"assistant\",\"message\":{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"$answer\"}]},\"session_id\":\"s1\"}"
  printf '%s\n' "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"$answer\",\"session_id\":\"s1\"}" ;;
*)
  printf 'Committed the change.\n[backlog-result] state=done detail="landed a file"\n' ;;
esac
`

// A claude worker configured with claude.output_format json or
// stream-json prints its marker inside JSON events; the supervisor reads
// it there (as wave mode does) and merges the issue instead of relaunching
// and parking a worker that did its job.
func TestClaudeWorkerResultIsReadInEveryOutputFormat(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"json", "stream-json"} {
		t.Run(format, func(t *testing.T) {
			f := newFixture(t)
			fake := filepath.Join(t.TempDir(), "claude")
			if err := os.WriteFile(fake, []byte(fakeClaudeWorker), 0o755); err != nil {
				t.Fatal(err)
			}
			f.config = strings.Replace(baseConfig, "    id: local\n", "    id: claude\n    claude.command: "+fake+
				"\n    claude.output_format: "+format+"\n    env.IS_SANDBOX: \"1\"\n", 1)
			f.issue(1, "Land a file", "Files: a/**")
			res := f.run(1)
			if res.err != nil || res.ExitCode != exitcode.OK || res.Tally.Merged != 1 {
				t.Fatalf("run: exit %d, %v, tally %+v\n%s", res.ExitCode, res.err, res.Tally, res.out)
			}
			if strings.Contains(res.out, "without a [backlog-result] marker") {
				t.Fatalf("the marker was missed:\n%s", res.out)
			}
			r, _, _ := runlog.Read(res.Dir)
			if _, ok := f.originFile(r.Info.WaveBranch, "a/1.txt"); !ok {
				t.Fatalf("origin %s lacks the worker's file", r.Info.WaveBranch)
			}
		})
	}
}
