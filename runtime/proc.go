package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// ProcStartTime returns field 22 of /proc/<pid>/stat (start time in clock
// ticks since boot) and whether the process is a zombie. Together with the
// pid it names one process for its whole life, so a recycled pid is never
// mistaken for the one a record saw.
func ProcStartTime(pid int) (start uint64, zombie bool, err error) {
	st, err := readStat(pid)
	return st.start, st.zombie, err
}

// procStat is what we use of /proc/<pid>/stat.
type procStat struct {
	pgrp   int
	sid    int // its session
	start  uint64
	zombie bool
}

func readStat(pid int) (procStat, error) {
	data, err := readSmall("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(data)
}

// parseStat reads the state, process group and start time from a
// /proc/<pid>/stat line. The command name (field 2) may contain spaces and
// ')' so fields are counted from the last ')'.
func parseStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, errors.New("proc stat: no ')'")
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state), f[2] field 5 (pgrp), f[3] field 6
	// (session), f[19] field 22.
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("proc stat: %d fields after comm", len(f))
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, fmt.Errorf("proc stat: starttime: %w", err)
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return procStat{}, fmt.Errorf("proc stat: pgrp: %w", err)
	}
	sid, err := strconv.Atoi(string(f[3]))
	if err != nil {
		return procStat{}, fmt.Errorf("proc stat: session: %w", err)
	}
	return procStat{pgrp: pgrp, sid: sid, start: st, zombie: string(f[0]) == "Z"}, nil
}

// groupAlive reports whether group pgid has a live member that started
// at or after since, the recorded leader's start time. Everything the agent
// forked started after its leader; an older process in a group of that
// number is someone else's (a recycled id) and is never counted. since 0
// means the group is unknown.
func groupAlive(pgid int, since uint64) bool {
	if pgid <= 1 || since == 0 {
		return false
	}
	// No member at all (the usual case once the agent has exited and been
	// reaped) answers without reading every process's stat; zombies not
	// yet reaped still count here, and the scan below sorts them out.
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return false
	}
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err == nil && !st.zombie && st.pgrp == pgid && st.start >= since {
			return true
		}
	}
	return false
}

// signalGroup signals group pgid while it still has a member no older
// than since (see groupAlive).
func signalGroup(pgid int, since uint64, sig syscall.Signal) bool {
	if !groupAlive(pgid, since) {
		return false
	}
	return syscall.Kill(-pgid, sig) == nil
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
