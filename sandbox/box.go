package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Network modes of a sandbox.
const (
	// NetAllowlist: a network namespace of its own whose only way out
	// is the proxy, to the allowlist.
	NetAllowlist = "allowlist"
	// NetNone: a network namespace of its own with no way out.
	NetNone = "none"
	// NetHost: the host's network (a verify step that needs it, by
	// the user's choice).
	NetHost = "host"
)

// Options is what one sandboxed process may reach.
type Options struct {
	Bwrap string // bubblewrap
	Self  string // our binary: the shim
	// Checkout is bound read-write; its git metadata is writable only
	// with GitWritable (a worker commits; a reviewer or verify does not).
	Checkout    string
	GitWritable bool
	// Borrow are the object directories the checkout's git may read
	// (Borrowed of the repository it belongs to), bound read-only: what
	// its own objects/info/alternates says is the sandboxed process's to
	// write, so it never decides what is mounted.
	Borrow     []string
	Writable   []string // more paths bound read-write
	ReadOnly   []string // paths bound read-only (the missing skipped)
	Needs      Needs    // what the agent CLI needs (package executor declares it)
	AllowHosts []string // allowed besides the executor's model endpoint
	Network    string   // NetAllowlist (the default), NetNone or NetHost
	// Refused is told each host the proxy refused, once, with why. It
	// runs on the proxy's goroutines.
	Refused func(hostport, why string)
}

// Box is a sandbox ready to run processes: a private directory holding
// the proxy's socket, and the proxy serving it. Close it after the last
// process inside ended.
type Box struct {
	o      Options
	dir    string
	proxy  *Proxy
	allow  Allowlist
	legacy bool
}

// Open prepares a sandbox for processes with the environment env (the
// executor's endpoint is read from it).
func Open(o Options, env []string) (*Box, error) {
	if o.Bwrap == "" || !filepath.IsAbs(o.Self) {
		return nil, errors.New("sandbox: bwrap and our own binary's path are needed")
	}
	if o.Network == "" {
		o.Network = NetAllowlist
	}
	allow, err := ParseAllowlist(append(o.Needs.endpoints(envLookup(env)), o.AllowHosts...))
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	dir, err := os.MkdirTemp(socketParent(), "wave-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	b := &Box{o: o, dir: dir, allow: allow}
	if o.Network == NetAllowlist {
		if b.proxy, err = ListenProxy(filepath.Join(dir, socketName), allow, o.Refused); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	return b, nil
}

// socketParent is where a Box's directory goes: the temporary directory,
// unless its path leaves no room for a unix socket's.
func socketParent() string {
	if d := os.TempDir(); len(d) < 60 {
		return d
	}
	return "/tmp"
}

// Allowlist is what the box's proxy lets through.
func (b *Box) Allowlist() Allowlist { return b.allow }

// Legacy reports whether the last Cmd's checkout was a worktree of
// another clone, whose git directory it had to make writable.
func (b *Box) Legacy() bool { return b.legacy }

// Close stops the proxy and removes the private directory.
func (b *Box) Close() error {
	var err error
	if b.proxy != nil {
		err = b.proxy.Close()
	}
	return errors.Join(err, os.RemoveAll(b.dir))
}

// Cmd returns the command that runs argv in the box with env, in cwd:
// bwrap. Its ExtraFiles are the box's copies of home files: close them
// once it started. Started in the agent's process group, it must be
// started with StopSignals ignored.
func (b *Box) Cmd(argv, env []string, cwd string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty argv")
	}
	lookup := envLookup(env)
	ms := systemMounts()
	files, fileMounts, err := b.homeMounts(lookup)
	if err != nil {
		return nil, err
	}
	ms = append(ms, fileMounts...)
	if b.o.Checkout != "" {
		ms = append(ms, Mount{Kind: MountWritable, Src: b.o.Checkout, Dest: b.o.Checkout})
		git, legacy, err := gitMounts(b.o.Checkout, b.o.GitWritable, b.o.Borrow)
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("sandbox: checkout %s: %w", b.o.Checkout, err)
		}
		ms, b.legacy = append(ms, git...), legacy
	}
	ms = append(ms, pathMounts(MountWritable, b.o.Writable)...)
	ms = append(ms, pathMounts(MountOptional, b.o.ReadOnly)...)
	ms = append(ms, argFileMounts(argv[1:])...)
	for _, m := range executableMounts(argv[0], lookup("PATH"), cwd) {
		if m.Dest != b.o.Self {
			ms = append(ms, m)
		}
	}
	if !onSystem(b.o.Self) {
		ms = append(ms, Mount{Kind: MountReadOnly, Src: b.o.Self, Dest: b.o.Self})
	}
	socket := ""
	if b.proxy != nil {
		ms = append(ms, Mount{Kind: MountReadOnly, Src: b.dir, Dest: SocketDir})
		socket = SocketDir + "/" + socketName
	}
	spec := Spec{Bwrap: b.o.Bwrap, Mounts: ms, Cwd: cwd, ShareNet: b.o.Network == NetHost,
		Command: shimCommand(b.o.Self, socket, b.allow.Forwards(), argv)}
	args := spec.Args()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = insideEnv(env)
	cmd.ExtraFiles = files
	return cmd, nil
}

// homeMounts are the private HOME (and the private directories named
// by the executor's variables) with copies of the files the agent CLI
// reads there, and a .gitconfig with the user's commit identity only.
// The files are the descriptors bwrap copies them from, as the
// command's ExtraFiles (descriptor 3 onwards).
func (b *Box) homeMounts(lookup func(string) string) ([]*os.File, []Mount, error) {
	home := lookup("HOME")
	var ms []Mount
	var files []*os.File
	add := func(f *os.File, dest string) {
		ms = append(ms, Mount{Kind: MountFile, FD: 3 + len(files), Dest: dest})
		files = append(files, f)
	}
	hasHome := filepath.IsAbs(home) && filepath.Clean(home) != "/" && !onSystem(home)
	if hasHome {
		ms = append(ms, Mount{Kind: MountTmpfs, Dest: filepath.Clean(home)})
	}
	var private []string
	for _, hf := range resolveHome(b.o.Needs.Home, lookup, home) {
		if hf.private != "" && !slices.Contains(private, hf.private) {
			// The CLI would create its directory; made here, it is a
			// mount point even under a read-only bind.
			if err := os.MkdirAll(hf.private, 0o700); err != nil {
				closeAll(files)
				return nil, nil, fmt.Errorf("sandbox: %w", err)
			}
			private = append(private, hf.private)
			ms = append(ms, Mount{Kind: MountTmpfs, Dest: hf.private})
		}
		f, err := os.Open(hf.path)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close()
			continue
		}
		add(f, hf.path)
	}
	if hasHome {
		if cfg := identityConfig(gitIdentity(lookup, home)); cfg != "" {
			r, w, err := os.Pipe()
			if err != nil {
				closeAll(files)
				return nil, nil, fmt.Errorf("sandbox: %w", err)
			}
			// A few lines: the pipe's buffer holds them, the write does
			// not block.
			_, err = w.WriteString(cfg)
			w.Close()
			if err != nil {
				r.Close()
				closeAll(files)
				return nil, nil, fmt.Errorf("sandbox: %w", err)
			}
			add(r, filepath.Join(home, ".gitconfig"))
		}
	}
	return files, ms, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// termEnv carries the agent's TERM past the shim, which runs with
// TERM=dumb: our binary's start-up asks a terminal that
// is not tmux or screen for its colours and waits seconds for an answer
// the runner's pty never gives. The shim puts TERM back for the agent.
const termEnv = "WAVE_SANDBOX_TERM"

// insideEnv is env for bwrap and the shim: the temporary
// directory the sandbox's own, TERM set aside (see termEnv).
func insideEnv(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		switch k, v, _ := strings.Cut(kv, "="); k {
		case "TMPDIR", termEnv:
		case "TERM":
			out = append(out, termEnv+"="+v)
		default:
			out = append(out, kv)
		}
	}
	return append(out, "TMPDIR=/tmp", "TERM=dumb")
}

// agentTerm is the shim's environment with the agent's TERM back (unset
// when it had none).
func agentTerm(env []string) []string {
	out := make([]string, 0, len(env))
	term, set := "", false
	for _, kv := range env {
		switch k, v, _ := strings.Cut(kv, "="); k {
		case termEnv:
			term, set = v, true
		case "TERM":
		default:
			out = append(out, kv)
		}
	}
	if set {
		out = append(out, "TERM="+term)
	}
	return out
}

// envLookup reads a variable of env (the last setting wins).
func envLookup(env []string) func(string) string {
	return func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
}
