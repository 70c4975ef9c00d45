package localagent

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// askPerson is --ask: a run started with answers ($WAVE_ANSWERED, as any
// agent that is no model reads it) goes on to the work; one without asks
// the question through this binary's `ask` (as a real agent would, with
// the WAVE_* environment the runner set) and reports that the run ends
// here.
func askPerson(root, question string, stdout io.Writer, getenv func(string) string) (answered bool, err error) {
	if getenv("WAVE_ANSWERED") == "1" {
		fmt.Fprintf(stdout, "[local-agent] people answered (%s); carrying on\n", getenv("WAVE_ANSWERS_FILE"))
		return true, nil
	}
	self, err := os.Executable()
	if err != nil {
		return false, fmt.Errorf("ask: %w", err)
	}
	args := []string{"--repo-root", root, "ask", "--question", question, "--blocking"}
	if lane := getenv("WAVE_LANE"); lane != "" {
		args = append([]string{"--lane", lane}, args...)
	}
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = stdout, stdout
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("ask: %w", err)
	}
	fmt.Fprintln(stdout, "[local-agent] asked a person; finishing until the answer comes")
	return false, nil
}
