package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one inbound message, as the SDK's own stdio transport
// does.
const maxLine = mcp.DefaultMaxLineLength

// Stdio is the transport of `wave-orchestrator mcp`: newline-delimited
// JSON-RPC on in and out, as the SDK's IOTransport speaks it, with one
// difference: a line that is no JSON-RPC message (not JSON, no version
// tag, too long) is answered with a JSON-RPC error response and skipped,
// where the SDK would end the session. A client's bad line is its own
// request's failure, not the server's.
func Stdio(in io.Reader, out io.Writer) mcp.Transport {
	pr, pw := io.Pipe()
	w := &lockedWriter{w: out}
	go func() { pw.CloseWithError(screen(in, pw, w)) }()
	return &mcp.IOTransport{Reader: pr, Writer: w}
}

// lockedWriter serialises the SDK's messages and screen's error replies:
// each is one Write, never interleaved.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// screen copies the lines of in that are JSON-RPC messages to pass and
// answers the others on reply, until in ends (nil) or pass is closed.
func screen(in io.Reader, pass io.Writer, reply io.Writer) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(br)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if bad := check(line, tooLong); bad != nil {
				if _, werr := reply.Write(bad); werr != nil {
					return werr
				}
			} else if _, werr := pass.Write(append(line, '\n')); werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its newline; past maxLine bytes the
// rest of the line is read and dropped, and tooLong says so.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(frag) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// check is the error reply to a line that is no JSON-RPC message (or a
// batch of them), nil for one that is.
func check(line []byte, tooLong bool) []byte {
	if tooLong {
		return errorReply(nil, jsonrpc.CodeParseError, fmt.Sprintf("message longer than %d bytes: not read", maxLine))
	}
	if !json.Valid(line) {
		return errorReply(nil, jsonrpc.CodeParseError, "not JSON: send one JSON-RPC 2.0 message per line")
	}
	msgs := []json.RawMessage{line}
	if t := bytes.TrimSpace(line); t[0] == '[' {
		if err := json.Unmarshal(t, &msgs); err != nil || len(msgs) == 0 {
			return errorReply(nil, jsonrpc.CodeInvalidRequest, "an empty or malformed batch")
		}
	}
	for _, m := range msgs {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			return errorReply(idOf(m), jsonrpc.CodeInvalidRequest, "not a JSON-RPC 2.0 message: "+err.Error())
		}
	}
	return nil
}

// idOf is the id of a malformed message when it has a usable one, so the
// client can match the error to its request.
func idOf(m json.RawMessage) any {
	var v struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(m, &v) != nil {
		return nil
	}
	if _, err := jsonrpc.MakeID(v.ID); err != nil {
		return nil
	}
	return v.ID
}

func errorReply(id any, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return append(b, '\n')
}
