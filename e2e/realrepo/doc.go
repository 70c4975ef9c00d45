// Package realrepo holds an end-to-end test of a backlog run on a real,
// public Go module this project does not write (github.com/google/uuid,
// taken from the module cache at test time, never vendored): scripted
// workers edit its code, backlog.setup downloads its modules and
// backlog.verify runs its own tests, sandboxed where bubblewrap works,
// offline (GOPROXY=off, the module cache read-only). Every issue merges
// and every merge commit passes the module's tests. It runs the release
// build that e2etest.Run makes (see CONTRIBUTING.md).
package realrepo
