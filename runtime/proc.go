package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"syscall"
)

// ProcStartTime returns field 22 of /proc/<pid>/stat (start time in clock
// ticks since boot) and whether the process is a zombie. Together with the
// pid it names one process for its whole life, so a recycled pid is never
// mistaken for the one a record saw.
func ProcStartTime(pid int) (start uint64, zombie bool, err error) {
	data, err := readSmall("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false, err
	}
	return parseStat(data)
}

// parseStat reads the state and start time from a /proc/<pid>/stat line.
// The command name (field 2) may contain spaces and ')' so fields are
// counted from the last ')'.
func parseStat(data []byte) (uint64, bool, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false, errors.New("proc stat: no ')'")
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state); field 22 is f[19].
	if len(f) < 20 {
		return 0, false, fmt.Errorf("proc stat: %d fields after comm", len(f))
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("proc stat: starttime: %w", err)
	}
	return st, string(f[0]) == "Z", nil
}

// ProcAlive reports whether pid is a live (non-zombie) process that started
// at start. A zero start accepts any live process with that pid.
func ProcAlive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, zombie, err := ProcStartTime(pid)
	if err != nil || zombie {
		return false
	}
	return start == 0 || st == start
}

// signalIfSame signals pid (or its group when group is true) only if the
// process still has the recorded start time.
func signalIfSame(pid int, start uint64, group bool, sig syscall.Signal) bool {
	if start == 0 || !ProcAlive(pid, start) {
		return false
	}
	target := pid
	if group {
		target = -pid
	}
	return syscall.Kill(target, sig) == nil
}

func syscallSignal(n int) syscall.Signal { return syscall.Signal(n) }
