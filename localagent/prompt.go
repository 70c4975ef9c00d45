package localagent

import (
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/executor"
)

// task is what the local agent reads from its prompt file.
type task struct {
	facts        map[string]string
	deliverables []string
	ownedPaths   []string
	components   []component
	contract     map[string]string
	evalTargets  []evalTarget
}

type component struct{ id, level string }

type evalTarget struct {
	id         string
	benchmarks []string
}

// parsePrompt reads the harness sections of a prompt written by
// executor.Prompt. It stops at the assigned-prompt heading: the agent's
// own prompt is untrusted text and may contain look-alike headings.
func parsePrompt(text string) task {
	t := task{facts: map[string]string{}, contract: map[string]string{}}
	head := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == executor.HeadAssigned {
			break
		}
		if strings.TrimSpace(line) == "" {
			head = ""
			continue
		}
		item, ok := strings.CutPrefix(line, "- ")
		if !ok {
			head = strings.TrimSpace(line)
			continue
		}
		k, v, kv := strings.Cut(item, ": ")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch head {
		case executor.HeadFacts:
			if kv {
				t.facts[k] = v
			}
		case executor.HeadExitContract:
			if kv {
				t.contract[k] = v
			}
		case executor.HeadDeliverables:
			t.deliverables = append(t.deliverables, strings.TrimSpace(item))
		case executor.HeadOwnedPaths:
			t.ownedPaths = append(t.ownedPaths, strings.TrimSpace(item))
		case executor.HeadComponents:
			if kv {
				t.components = append(t.components, component{k, v})
			} else {
				t.components = append(t.components, component{id: strings.TrimSpace(item)})
			}
		case executor.HeadEvalTargets:
			if kv {
				t.evalTargets = append(t.evalTargets, evalTarget{id: k, benchmarks: benchmarks(v)})
			}
		}
	}
	return t
}

// benchmarks extracts the ids of a `benchmarks=a,b` field.
func benchmarks(v string) []string {
	for _, f := range strings.Fields(v) {
		if list, ok := strings.CutPrefix(f, "benchmarks="); ok {
			return strings.Split(list, ",")
		}
	}
	return nil
}
