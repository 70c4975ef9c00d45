package runtime

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EndSessions ends what is left of the sessions the ids lead — processes
// started in a session of their own (a held start with Setsid) by a
// process that died without ending them: SIGTERM to every process group
// of each session, up to grace for them to exit, then SIGKILL until they
// are gone (up to grace again). A session counts only while it is still
// the one recorded: its members started no earlier than its leader, and
// a live process with the leader's pid but another start time means the
// pid was reused, so nothing of that number is signalled. found are the
// ids that had a live member; the error is for ctx ending, or members
// still alive after SIGKILL.
func EndSessions(ctx context.Context, ids []ProcID, grace time.Duration) (found []ProcID, err error) {
	if grace <= 0 {
		grace = DefaultGrace
	}
	live := liveSessions(ids, scanProcs())
	for _, id := range ids {
		if len(live[id]) > 0 {
			found = append(found, id)
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	signalSessions(live, syscall.SIGTERM)
	gone := func() bool { live = liveSessions(found, scanProcs()); return len(live) == 0 }
	if err := waitUntil(ctx, grace, gone); err != nil {
		return found, err
	}
	deadline := time.Now().Add(grace)
	for !gone() {
		if time.Now().After(deadline) {
			return found, fmt.Errorf("still running after SIGKILL: %s", describeSessions(live))
		}
		// Again at every look: a member may have forked a group of its
		// own meanwhile.
		signalSessions(live, syscall.SIGKILL)
		if err := waitUntil(ctx, 100*time.Millisecond, gone); err != nil {
			return found, err
		}
	}
	return found, nil
}

// proc is one process of a /proc scan.
type proc struct {
	pid int
	procStat
}

// scanProcs reads every process's stat; one that exits meanwhile is
// left out.
func scanProcs() []proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]proc, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, err := readStat(pid); err == nil {
			out = append(out, proc{pid: pid, procStat: st})
		}
	}
	return out
}

// liveSessions maps each id with a live member in procs to the process
// groups of its session's live members. A zombie is dead (nothing left
// to signal); a process with the id's pid and another start time means
// the session is gone and its number someone else's (the kernel reuses
// no pid while a process still has it as its session or group).
func liveSessions(ids []ProcID, procs []proc) map[ProcID][]int {
	out := map[ProcID][]int{}
	for _, id := range ids {
		if id.Pid <= 1 || id.Start == 0 {
			continue
		}
		if i := slices.IndexFunc(procs, func(p proc) bool { return p.pid == id.Pid }); i >= 0 && procs[i].start != id.Start {
			continue
		}
		var groups []int
		for _, p := range procs {
			if p.sid == id.Pid && !p.zombie && p.start >= id.Start && p.pgrp > 1 && !slices.Contains(groups, p.pgrp) {
				groups = append(groups, p.pgrp)
			}
		}
		if len(groups) > 0 {
			slices.Sort(groups)
			out[id] = groups
		}
	}
	return out
}

// signalSessions sends sig to every process group of the live sessions:
// a group never spans sessions, so its every member is theirs.
func signalSessions(live map[ProcID][]int, sig syscall.Signal) {
	for _, groups := range live {
		for _, g := range groups {
			_ = syscall.Kill(-g, sig)
		}
	}
}

func describeSessions(live map[ProcID][]int) string {
	var parts []string
	for id, groups := range live {
		parts = append(parts, fmt.Sprintf("session %d (groups %v)", id.Pid, groups))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
