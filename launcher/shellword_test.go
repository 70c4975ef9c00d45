package launcher

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The coordination command shown in prompts is meant to be pasted into a
// shell: every word must come back literally, and safe words stay bare.
func TestShellWordRoundTrip(t *testing.T) {
	words := []string{"", "plain", "/a/b-c_d.e", "it's", `"dq"`, "$(touch PWNED)", "`id`", "a\nb", `back\slash`, "'", "*", "; rm -rf /", "A 1"}
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellWord(w)
	}
	out, err := exec.Command("sh", "-c", "printf '%s\\0' "+strings.Join(q, " ")).Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if !slices.Equal(got, words) {
		t.Fatalf("got %q, want %q", got, words)
	}
	if shellWord("/usr/bin/wave-orchestrator") != "/usr/bin/wave-orchestrator" {
		t.Fatal("a safe word was quoted")
	}
}
