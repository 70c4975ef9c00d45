package runtime

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// HoldCommand is the hidden subcommand of our binary that holds a
// process until it is released (StartHeld); the binary dispatches it
// (HoldMain) before it builds any command tree.
const HoldCommand = "hold"

// ProcID names one process for its whole life: its pid and its start
// time (ProcStartTime), so a pid the kernel gave to another process
// since is never mistaken for it.
type ProcID struct {
	Pid   int
	Start uint64
}

// heldCode is the exit code of a held process nobody released: it ran
// nothing.
const heldCode = 125

// Held is a process started held: it exists, in the session cmd gave it,
// with its identity known, but runs nothing of cmd's program until
// Release.
type Held struct {
	cmd  *exec.Cmd
	gate *os.File
	id   ProcID
}

// StartHeld starts cmd held. Our own binary takes the program's place
// until Release, then becomes it (exec, in the same process: the
// identity ID returns is the program's). A caller records the identity
// first and releases after, so there is no instant in which the program
// runs unrecorded: if the caller dies before Release, the gate closes
// with it and the held process exits without having run anything.
// cmd is then waited for as usual (Wait; its Cancel and WaitDelay hold).
func StartHeld(cmd *exec.Cmd) (*Held, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("start held: already started")
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start held: %w", err)
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	// /proc/self/exe is resolved in the new process, before its exec:
	// our binary even if its file was replaced since we started.
	cmd.Args = append([]string{"wave-orchestrator", HoldCommand, strconv.Itoa(fd), cmd.Path}, cmd.Args...)
	cmd.Path = "/proc/self/exe"
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	h := &Held{cmd: cmd, gate: w, id: ProcID{Pid: cmd.Process.Pid}}
	start, _, err := ProcStartTime(h.id.Pid)
	if err != nil {
		h.Abandon()
		return nil, fmt.Errorf("start held: %w", err)
	}
	h.id.Start = start
	return h, nil
}

// ID is the held process's identity.
func (h *Held) ID() ProcID { return h.id }

// Release lets the held process become its program.
func (h *Held) Release() error {
	_, err := h.gate.Write([]byte{'g'})
	if cerr := h.gate.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("release held process %d: %w", h.id.Pid, err)
	}
	return nil
}

// Abandon lets the held process go without running anything; the caller
// still waits for it (cmd.Wait).
func (h *Held) Abandon() { h.gate.Close() }

// HoldMain runs the hold subcommand args names, if it is one.
func HoldMain(args []string) (code int, ok bool) {
	if len(args) > 0 && args[0] == HoldCommand {
		return Hold(args[1:]), true
	}
	return 0, false
}

// Hold is the held process: args are the gate's descriptor, the
// program's path and its argv. It waits for its release, then becomes
// the program, with the environment it was given. A gate closed
// unreleased exits heldCode.
func Hold(args []string) int {
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "hold: want FD PATH ARGV...")
		return 2
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		fmt.Fprintf(os.Stderr, "hold: bad descriptor %q\n", args[0])
		return 2
	}
	gate := os.NewFile(uintptr(fd), "gate")
	var b [1]byte
	_, err = io.ReadFull(gate, b[:])
	gate.Close()
	if err != nil || b[0] != 'g' {
		return heldCode
	}
	err = syscall.Exec(args[1], args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "cannot run %s: %v\n", args[2], err)
	return 127
}
