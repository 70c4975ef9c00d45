package localagent

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// answersHeading is the prompt section the launcher writes the answers
// of people under (questions.HeadAnswers).
const answersHeading = "Answers from people:"

// askPerson is --ask: a prompt with answers goes on to the work; one
// without asks the question through this binary's `ask` (as a real agent
// would, with the WAVE_* environment the runner set) and reports that
// the run ends here.
func askPerson(prompt, root, question string, stdout io.Writer, getenv func(string) string) (answered bool, err error) {
	if strings.Contains(prompt, "\n"+answersHeading+"\n") {
		fmt.Fprintln(stdout, "[local-agent] the prompt holds answers from people; carrying on")
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
