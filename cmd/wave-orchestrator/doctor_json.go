package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/wave-orchestrator/wave-orchestrator/internal/exitcode"
	"github.com/wave-orchestrator/wave-orchestrator/preflight"
)

// printFindingsJSON writes the report and exits as the text form does:
// 1 when any finding is an error.
func printFindingsJSON(w io.Writer, root string, fs []preflight.Finding) error {
	r := preflight.NewReport(root, fs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	if !r.OK {
		return withCode(exitcode.Failed, fmt.Errorf("doctor: %d error(s)", len(r.Errors)))
	}
	return nil
}
