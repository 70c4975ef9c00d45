package jsonfile

import (
	"errors"
	"io/fs"
	"os"
)

// Every record, log and directory wave-orchestrator keeps (the state
// root, run directories, prompts, agent logs, event logs, locks, final PR
// bodies, verify logs) holds what agents read and wrote, and sometimes a
// credential's neighbourhood: it is the user's alone. These modes are
// asked for at creation, so no umask can widen them (a umask only clears
// bits); every writer creates through the helpers below.
const (
	FileMode os.FileMode = 0o600
	DirMode  os.FileMode = 0o700
)

// MkdirAll makes dir and its missing parents with DirMode.
func MkdirAll(dir string) error { return os.MkdirAll(dir, DirMode) }

// WriteFile writes data to path with FileMode, in place (not atomic: for
// files nothing reads while they are written, such as a prompt before its
// run starts). An existing file keeps its mode; Tighten fixes an old one.
func WriteFile(path string, data []byte) error { return os.WriteFile(path, data, FileMode) }

// Create creates or truncates path with FileMode.
func Create(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, FileMode)
}

// OpenAppend opens path for appending, creating it with FileMode; extra
// flags (os.O_TRUNC) are added.
func OpenAppend(path string, extra int) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|extra, FileMode)
}

// Tighten takes group and other permissions off an existing directory
// (a state root an older version made 0755), so what is beneath it is
// out of other users' reach whatever its own modes. A missing dir is
// fine.
func Tighten(dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 == 0 {
		return nil
	}
	return os.Chmod(dir, fi.Mode().Perm()&^0o077)
}
