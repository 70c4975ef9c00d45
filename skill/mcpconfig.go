package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// MergeMCPConfig is old (a .mcp.json's bytes, nil when there is none)
// with the server entry under mcpServers.<Name>, every other key and
// server kept as it was, and what that is: "created" (no file),
// "updated", or "unchanged" (the same entry is there; out is old). An
// entry that differs is a *ChangedError unless force. A file that is no
// JSON object, or whose mcpServers is none, is an error saying where:
// never overwritten, even with force.
func MergeMCPConfig(old []byte, entry map[string]any, force bool) (out []byte, action string, err error) {
	action = "updated"
	top := map[string]json.RawMessage{}
	switch {
	case old == nil:
		action = "created"
	case len(bytes.TrimSpace(old)) == 0:
	default:
		if err := json.Unmarshal(old, &top); err != nil || top == nil {
			return nil, "", fmt.Errorf("not a JSON object%s; fix or remove it, then install again", where(old, err))
		}
	}
	servers := map[string]json.RawMessage{}
	if raw, ok := top["mcpServers"]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil || servers == nil {
			return nil, "", errors.New(`its "mcpServers" is not a JSON object; fix or remove it, then install again`)
		}
	}
	want, err := json.Marshal(entry)
	if err != nil {
		return nil, "", err
	}
	if have, ok := servers[Name]; ok {
		if sameJSON(have, want) {
			return old, "unchanged", nil
		}
		if !force {
			return nil, "", &ChangedError{What: fmt.Sprintf("its mcpServers.%s entry", Name)}
		}
	}
	servers[Name] = want
	if top["mcpServers"], err = json.Marshal(servers); err != nil {
		return nil, "", err
	}
	out, err = json.MarshalIndent(top, "", "  ")
	if err != nil {
		return nil, "", err
	}
	return append(out, '\n'), action, nil
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// where is the line and column of a JSON syntax error in data, or ""
// when err says none.
func where(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if err != nil {
			return ": " + err.Error()
		}
		return ""
	}
	// Offset counts the bytes read, the offending one included.
	line, col := 1, 1
	for _, c := range data[:min(max(int(se.Offset)-1, 0), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf(" (line %d, column %d: %v)", line, col, se)
}
