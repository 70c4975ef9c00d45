package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// systemDirs are bound read-only when present (a symlink, as merged-/usr
// systems have for /bin and /lib, stays a symlink).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix"}

// hiddenFiles and privateDirs are secrets of the system a process
// running as root could otherwise read through /etc: password hashes,
// the host's SSH and TLS private keys.
var (
	hiddenFiles = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-"}
	privateDirs = []string{"/etc/ssh", "/etc/ssl/private"}
)

// SocketDir is where a sandbox sees its proxy's socket.
const SocketDir = "/run/wave-sandbox"

// socketName is the proxy's socket in a Box's private directory.
const socketName = "proxy.sock"

// systemMounts are the read-only system, a fresh /proc and /dev, a
// private /tmp, and the system's secrets hidden.
func systemMounts() []Mount {
	ms := []Mount{{Kind: MountProc, Dest: "/proc"}, {Kind: MountDev, Dest: "/dev"}, {Kind: MountTmpfs, Dest: "/tmp"}}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				ms = append(ms, Mount{Kind: MountSymlink, Src: target, Dest: d})
			}
		case fi.IsDir():
			ms = append(ms, Mount{Kind: MountReadOnly, Src: d, Dest: d})
		}
	}
	for _, f := range hiddenFiles {
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
			ms = append(ms, Mount{Kind: MountHidden, Dest: f})
		}
	}
	for _, d := range privateDirs {
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			ms = append(ms, Mount{Kind: MountTmpfs, Dest: d})
		}
	}
	return ms
}

// onSystem reports whether path is under a directory systemMounts binds
// (so nothing needs binding for it).
func onSystem(path string) bool {
	for _, d := range systemDirs {
		if within(path, d) {
			return true
		}
	}
	return false
}

// executableMounts binds argv0 (looked up on path, the agent's PATH,
// when it has no slash) read-only when it is not on the system already:
// the file, its real path, and for a package manager's install (a path
// through node_modules) the whole node_modules tree it runs from.
func executableMounts(argv0, path, cwd string) []Mount {
	exe := lookPath(argv0, path, cwd)
	if exe == "" || onSystem(exe) {
		return nil
	}
	ms := []Mount{{Kind: MountOptional, Src: exe, Dest: exe}}
	real, err := filepath.EvalSymlinks(exe)
	if err != nil {
		return ms
	}
	if i := strings.Index(real, "/node_modules/"); i >= 0 {
		nm := real[:i+len("/node_modules")]
		return append(ms, Mount{Kind: MountReadOnly, Src: nm, Dest: nm})
	}
	if real != exe && !onSystem(real) {
		ms = append(ms, Mount{Kind: MountReadOnly, Src: real, Dest: real})
	}
	return ms
}

// lookPath finds name as the agent would: a path as is (relative to
// cwd), else the first executable file of that name on path.
func lookPath(name, path, cwd string) string {
	if name == "" {
		return ""
	}
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(cwd, name)
		}
		return filepath.Clean(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// argFileMounts binds, read-only, every argument that names a file by
// its absolute path: the command line is the user's configuration, and a
// script, settings or MCP file it names is meant to be read.
// Directories are not bound this way.
func argFileMounts(args []string) []Mount {
	var ms []Mount
	for _, a := range args {
		if !filepath.IsAbs(a) || onSystem(a) {
			continue
		}
		if fi, err := os.Stat(a); err == nil && fi.Mode().IsRegular() {
			a = filepath.Clean(a)
			ms = append(ms, Mount{Kind: MountOptional, Src: a, Dest: a})
		}
	}
	return ms
}

// pathMounts binds each of paths at its own path, skipping the empty
// and the relative.
func pathMounts(kind string, paths []string) []Mount {
	var ms []Mount
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		ms = append(ms, Mount{Kind: kind, Src: p, Dest: p})
	}
	return ms
}
