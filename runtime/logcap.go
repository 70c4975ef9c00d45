package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/wave-orchestrator/wave-orchestrator/jsonfile"
)

// agent.log is the record of an agent's output. With a cap (Payload.
// MaxLogBytes) it is kept in three segments of at most a third of the cap
// each: agent.log.head is the first (how the agent started), agent.log.1
// the previous one, agent.log the current one; older middle segments are
// dropped. Segments are cut at line ends, so a marker line is never split,
// and each later segment opens with a rotatedNotice line.
const (
	headSuffix = ".head"
	prevSuffix = ".1"
	// rotatedNotice begins the first line of a rotated agent.log.
	rotatedNotice = "[wave] agent.log rotated"
	// MinLogCap is the smallest cap: a segment must hold more than the
	// tail the gates read (256 KiB).
	MinLogCap = 1 << 20
)

// cappedLog writes agent.log, rotating it past its segment size.
type cappedLog struct {
	path      string
	seg       int64 // 0: no cap
	f         *os.File
	n         int64 // bytes in the current segment
	rotations int
}

// openLog opens (appending to) agent.log at path; limit is the cap, 0
// for none, otherwise raised to MinLogCap.
func openLog(path string, limit int64) (*cappedLog, error) {
	f, err := jsonfile.OpenAppend(path, 0)
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	l := &cappedLog{path: path, f: f}
	if fi, err := f.Stat(); err == nil {
		l.n = fi.Size()
	}
	if limit > 0 {
		l.seg = max(limit, MinLogCap) / 3
	}
	return l, nil
}

// Write appends p. When p would overflow the segment, the segment ends at
// p's last newline (or, for a line longer than an eighth of a segment,
// wherever it is) and the rest goes to the next one.
func (l *cappedLog) Write(p []byte) (int, error) {
	if l.seg == 0 || l.n+int64(len(p)) <= l.seg {
		return l.write(p)
	}
	cut := bytes.LastIndexByte(p, '\n') + 1
	if cut == 0 && l.n+int64(len(p)) <= l.seg+l.seg/8 {
		return l.write(p) // wait for the line's end
	}
	n, err := l.write(p[:cut])
	if err != nil {
		return n, err
	}
	if err := l.rotate(); err != nil {
		// Keep the record complete rather than bounded.
		m, err := l.write(p[cut:])
		return n + m, err
	}
	m, err := l.write(p[cut:])
	return n + m, err
}

func (l *cappedLog) write(p []byte) (int, error) {
	n, err := l.f.Write(p)
	l.n += int64(n)
	return n, err
}

// rotate moves the current segment to agent.log.head (the first time) or
// agent.log.1 and starts a new agent.log with a notice.
func (l *cappedLog) rotate() error {
	to := l.path + prevSuffix
	if l.rotations == 0 {
		to = l.path + headSuffix
	}
	if err := os.Rename(l.path, to); err != nil {
		return err
	}
	f, err := jsonfile.OpenAppend(l.path, os.O_TRUNC)
	if err != nil {
		// Carry on in the renamed file: losing output is worse.
		return err
	}
	l.f.Close()
	l.f, l.n = f, 0
	l.rotations++
	_, err = fmt.Fprintf(l, "%s (segment %d): the first segment is in agent.log%s, the previous one in agent.log%s\r\n",
		rotatedNotice, l.rotations+1, headSuffix, prevSuffix)
	return err
}

func (l *cappedLog) Close() error { return l.f.Close() }

// ReadLogTail returns at most max bytes from the end of the agent log at
// path, continuing into its previous segment (agent.log.1) when the
// current one is shorter, without the rotation notice between them: what
// the gates and status read is the same whether or not the log rotated.
func ReadLogTail(path string, limit int64) (string, error) {
	cur, err := readTailBytes(path, limit)
	if err != nil {
		return "", err
	}
	if int64(len(cur)) >= limit || !bytes.HasPrefix(cur, []byte(rotatedNotice)) {
		return string(cur), nil
	}
	if i := bytes.IndexByte(cur, '\n'); i >= 0 {
		cur = cur[i+1:]
	}
	prev, err := readTailBytes(path+prevSuffix, limit-int64(len(cur)))
	if errors.Is(err, fs.ErrNotExist) {
		prev, err = readTailBytes(path+headSuffix, limit-int64(len(cur)))
	}
	if err != nil {
		return string(cur), nil
	}
	var b strings.Builder
	b.Grow(len(prev) + len(cur))
	b.Write(prev)
	b.Write(cur)
	return b.String(), nil
}

// readTailBytes reads at most limit bytes from the end of a file.
func readTailBytes(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(0, fi.Size()-limit)
	b := make([]byte, fi.Size()-off)
	n, err := f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return b[:n], err
}
