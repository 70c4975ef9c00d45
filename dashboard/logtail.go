package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/fsnotify/fsnotify"
)

// tailBytes bounds how much of a log the views read: enough for ~40 long
// lines, cheap for a lane of hundreds of runs.
const tailBytes = 32 << 10

// LogTail returns the last n lines of the log at path, escape sequences
// stripped; a carriage-return-rewritten line (progress bars) keeps only
// its final text.
func LogTail(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	off := max(0, fi.Size()-tailBytes)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("log %s: %w", path, err)
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:] // drop the partial first line
		}
	}
	raw := strings.Split(strings.TrimRight(string(buf), "\n"), "\n")
	if len(raw) == 1 && raw[0] == "" {
		return []string{}, nil
	}
	lines := make([]string, 0, len(raw))
	for _, l := range raw {
		lines = append(lines, strings.TrimRight(clean(lastCR(l)), " "))
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines, nil
}

// lastCR keeps the text a terminal would show after carriage returns.
func lastCR(l string) string {
	segs := strings.Split(l, "\r")
	for i := len(segs) - 1; i >= 0; i-- {
		if strings.TrimSpace(segs[i]) != "" {
			return segs[i]
		}
	}
	return ""
}

// FollowLog copies the log at path to w from its current end as it
// grows, until ctx is done or finished (if not nil) reports true. It waits
// on fsnotify events of the log's directory rather than polling, and asks
// finished after each of them: the run directory also holds the run's
// records, whose last write follows the log's last line, so the log is
// copied to its end once more before returning. A log that is truncated
// is followed from its new start, one rotated across the segments.
func FollowLog(ctx context.Context, path string, w io.Writer, finished func() bool) error {
	wt, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	defer wt.Close()
	if err := wt.Add(filepath.Dir(path)); err != nil {
		return fmt.Errorf("follow %s: %w", path, err)
	}
	var off int64
	var ino uint64
	if fi, err := os.Stat(path); err == nil {
		off, ino = fi.Size(), inode(fi)
	}
	done := func() bool { return finished != nil && finished() }
	for end := done(); ; end = done() {
		// Checked before copying: output written before the run's
		// final record is then never left behind.
		n, id, err := copyFrom(path, off, ino, w)
		if err != nil || end {
			return err
		}
		off, ino = n, id
		select {
		case <-ctx.Done():
			return nil
		case err := <-wt.Errors:
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return fmt.Errorf("follow %s: %w", path, err)
			}
		case <-wt.Events:
		}
	}
}

// copyFrom writes path's bytes from off to w and returns the new offset
// and the file's inode. A log replaced since (ino differs: the runner
// rotated it, see runtime.ReadLogTail) is finished from the segment it
// was renamed to, then followed from its new start; one truncated in
// place is followed from its new start.
func copyFrom(path string, off int64, ino uint64, w io.Writer) (int64, uint64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		// Between a rotation's rename and the new segment: keep the old
		// segment's identity, so its rest is copied once the new one shows.
		return off, ino, nil
	}
	if err != nil {
		return off, ino, fmt.Errorf("follow %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return off, ino, fmt.Errorf("follow %s: %w", path, err)
	}
	now := inode(fi)
	switch {
	case ino != 0 && now != ino:
		copyRest(path, off, ino, w)
		off = 0
	case fi.Size() < off:
		off = 0
	}
	n, err := io.Copy(w, io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return off + n, now, fmt.Errorf("follow %s: %w", path, err)
	}
	return off + n, now, nil
}

func inode(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}

// copyRest copies what follows off in the rotated segment (agent.log.1 or
// agent.log.head) that is the file ino.
func copyRest(path string, off int64, ino uint64, w io.Writer) {
	for _, seg := range []string{path + ".1", path + ".head"} {
		f, err := os.Open(seg)
		if err != nil {
			continue
		}
		fi, err := f.Stat()
		if err == nil && inode(fi) == ino && fi.Size() >= off {
			io.Copy(w, io.NewSectionReader(f, off, fi.Size()-off))
		}
		f.Close()
	}
}
