package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A line that is no JSON-RPC message gets a JSON-RPC error reply, with
// the request's id when it has one, and is not passed on; the messages
// around it are, in order, untouched.
func TestALineThatIsNoMessageIsAnsweredAndTheRestPass(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`garbage{`,
		``,
		`{"id":2,"method":"ping"}`,
		`[]`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\r",
	}, "\n")
	var pass, reply bytes.Buffer
	if err := screen(strings.NewReader(in), &pass, &reply); err != nil {
		t.Fatal(err)
	}
	want := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n"
	if pass.String() != want {
		t.Fatalf("passed on:\n%s\nwant:\n%s", pass.String(), want)
	}
	type errReply struct {
		ID    any `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	var replies []errReply
	for _, l := range strings.Split(strings.TrimSpace(reply.String()), "\n") {
		var r errReply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("reply %q: %v", l, err)
		}
		replies = append(replies, r)
	}
	if len(replies) != 3 || replies[0].Error.Code != -32700 || replies[1].Error.Code != -32600 || replies[1].ID != 2.0 || replies[2].Error.Code != -32600 {
		t.Fatalf("replies %+v\n%s", replies, reply.String())
	}
}

// A message longer than the bound is refused and its rest skipped; the
// next line is read as usual.
func TestAnOverlongLineIsRefusedAndTheNextRead(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("x", maxLine) + `"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	var pass, reply bytes.Buffer
	if err := screen(strings.NewReader(in), &pass, &reply); err != nil {
		t.Fatal(err)
	}
	if pass.String() != `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n" || !strings.Contains(reply.String(), "longer than") {
		t.Fatalf("passed %q, replied %q", pass.String()[:min(80, pass.Len())], reply.String())
	}
}
