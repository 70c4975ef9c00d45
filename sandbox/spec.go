package sandbox

import (
	"cmp"
	"slices"
	"strconv"
)

// Kinds of Mount.
const (
	MountProc     = "proc"    // a proc of the sandbox's own pid namespace
	MountDev      = "dev"     // a minimal /dev
	MountTmpfs    = "tmpfs"   // a private, empty, writable directory
	MountReadOnly = "ro"      // Src bound read-only at Dest
	MountOptional = "ro-try"  // the same, skipped when Src is missing
	MountWritable = "rw"      // Src bound read-write at Dest
	MountSymlink  = "symlink" // Dest is a symlink to Src
	MountFile     = "file"    // a private copy (mode 0600) of descriptor FD at Dest
	MountHidden   = "hidden"  // a file made unreadable (bound over by /dev/null)
)

// Mount is one filesystem operation inside the sandbox.
type Mount struct {
	Kind string
	Src  string
	Dest string
	FD   int
}

// rank orders mounts of one destination: a directory first, then what
// lands on it.
func rank(kind string) int {
	switch kind {
	case MountTmpfs, MountProc, MountDev:
		return 0
	case MountSymlink:
		return 1
	case MountReadOnly, MountOptional, MountWritable:
		return 2
	}
	return 3
}

// Spec is one sandboxed process: how bwrap is called and what it runs.
type Spec struct {
	Bwrap  string
	Mounts []Mount
	Cwd    string
	// ShareNet leaves the process on the host's network (no namespace
	// of its own, no proxy).
	ShareNet bool
	// Command runs inside: the shim and, after it, the agent.
	Command []string
}

// Args is bwrap's command line for s: its own user, pid, ipc, uts,
// cgroup and network namespaces, no capabilities, killed with the
// process that started it, the mounts in an order where every
// directory is mounted before what is mounted inside it (a checkout
// under HOME lands on the private HOME, not under it), and the root
// read-only.
func (s Spec) Args() []string {
	a := []string{s.Bwrap, "--unshare-all"}
	if s.ShareNet {
		a = append(a, "--share-net")
	}
	a = append(a, "--die-with-parent", "--cap-drop", "ALL")
	ms := slices.Clone(s.Mounts)
	slices.SortStableFunc(ms, func(x, y Mount) int {
		return cmp.Or(cmp.Compare(x.Dest, y.Dest), cmp.Compare(rank(x.Kind), rank(y.Kind)))
	})
	for _, m := range ms {
		switch m.Kind {
		case MountProc:
			a = append(a, "--proc", m.Dest)
		case MountDev:
			a = append(a, "--dev", m.Dest)
		case MountTmpfs:
			a = append(a, "--tmpfs", m.Dest)
		case MountReadOnly:
			a = append(a, "--ro-bind", m.Src, m.Dest)
		case MountOptional:
			a = append(a, "--ro-bind-try", m.Src, m.Dest)
		case MountWritable:
			a = append(a, "--bind", m.Src, m.Dest)
		case MountSymlink:
			a = append(a, "--symlink", m.Src, m.Dest)
		case MountFile:
			a = append(a, "--perms", "0600", "--file", strconv.Itoa(m.FD), m.Dest)
		case MountHidden:
			a = append(a, "--ro-bind-try", "/dev/null", m.Dest)
		}
	}
	// The root holds only the directories made for the mounts: read-only,
	// a write outside them fails rather than landing in a scratch copy
	// of a path that looks like the real one.
	a = append(a, "--remount-ro", "/")
	if s.Cwd != "" {
		a = append(a, "--chdir", s.Cwd)
	}
	a = append(a, "--")
	return append(a, s.Command...)
}
