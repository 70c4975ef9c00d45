package runtime

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// openPty opens a pty pair. Unlike creack/pty it never calls Fd on the
// master (which switches it to blocking mode), so the master stays in the
// runtime poller and a read deadline or Close ends a pending Read even while
// a stray process still holds the slave open.
func openPty() (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	var n uint32
	err = control(master, func(fd int) error {
		if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
			return fmt.Errorf("unlockpt: %w", err)
		}
		var err error
		n, err = unix.IoctlGetUint32(fd, unix.TIOCGPTN)
		if err != nil {
			return fmt.Errorf("ptsname: %w", err)
		}
		return nil
	})
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	return master, slave, nil
}

// copySize gives the pty the window size of from (the pane), if it has one.
func copySize(from, to *os.File) {
	var ws *unix.Winsize
	if control(from, func(fd int) (err error) {
		ws, err = unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		return err
	}) != nil {
		return
	}
	control(to, func(fd int) error { return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, ws) })
}

// control runs fn on f's descriptor without changing its blocking mode.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// unread is how many bytes the agent wrote to the pty that the runner has
// not read yet. On a loaded machine the reader can be descheduled for
// longer than the silence limit while the agent keeps printing; those
// bytes are output all the same.
func unread(master *os.File) int {
	var n int
	if control(master, func(fd int) (err error) {
		n, err = unix.IoctlGetInt(fd, unix.TIOCINQ)
		return err
	}) != nil {
		return 0
	}
	return n
}
