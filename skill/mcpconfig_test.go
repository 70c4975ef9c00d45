package skill

import (
	"errors"
	"strings"
	"testing"
)

// .mcp.json is merged, never clobbered: a missing or empty file gets the
// entry, the same entry is left alone byte for byte, a different one is
// refused unless forced, and a file that is no JSON object is refused
// with where it breaks, even when forced.
func TestMCPConfigIsMergedNeverClobbered(t *testing.T) {
	ours := Entry("wave-orchestrator", false)
	same := `{"mcpServers":{"wave-orchestrator":{"args":["mcp"],"command":"wave-orchestrator","type":"stdio"}}}`
	cases := []struct {
		name       string
		old        string
		absent     bool
		force      bool
		action     string
		err        string
		changedErr bool
	}{
		{name: "no file", absent: true, action: "created"},
		{name: "empty file", old: " \n", action: "updated"},
		{name: "other servers", old: `{"mcpServers":{"x":{"command":"y"}}}`, action: "updated"},
		{name: "same entry", old: same, action: "unchanged"},
		{name: "same entry reformatted", old: "{\n \"mcpServers\": {\"wave-orchestrator\": {\"type\":\"stdio\",\"command\":\"wave-orchestrator\",\"args\":[\"mcp\"]}}}", action: "unchanged"},
		{name: "changed entry", old: `{"mcpServers":{"wave-orchestrator":{"command":"old"}}}`, changedErr: true},
		{name: "changed entry forced", old: `{"mcpServers":{"wave-orchestrator":{"command":"old"}}}`, force: true, action: "updated"},
		{name: "broken JSON", old: "{\n  \"mcpServers\": {,\n}", force: true, err: "line 2, column 18"},
		{name: "an array", old: `[1]`, err: "not a JSON object"},
		{name: "servers not an object", old: `{"mcpServers": []}`, force: true, err: `"mcpServers" is not a JSON object`},
	}
	for _, c := range cases {
		var old []byte
		if !c.absent {
			old = []byte(c.old)
		}
		out, action, err := MergeMCPConfig(old, ours, c.force)
		var ce *ChangedError
		switch {
		case c.changedErr:
			if !errors.As(err, &ce) {
				t.Errorf("%s: error %v, want a changed-file error", c.name, err)
			}
			continue
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) || errors.As(err, &ce) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if action != c.action {
			t.Errorf("%s: action %s, want %s", c.name, action, c.action)
		}
		if action == "unchanged" && string(out) != c.old {
			t.Errorf("%s: unchanged, but the bytes differ:\n%s", c.name, out)
		}
		if action != "unchanged" && !strings.Contains(string(out), `"command": "wave-orchestrator"`) {
			t.Errorf("%s: no entry in\n%s", c.name, out)
		}
		if c.name == "other servers" && !strings.Contains(string(out), `"x"`) {
			t.Errorf("%s: lost the other server:\n%s", c.name, out)
		}
	}
}
