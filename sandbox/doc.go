// Package sandbox confines an untrusted process — a backlog worker, a
// reviewer, a verify step, an opt-in wave agent — with bubblewrap
// (bwrap): the system read-only, its own checkout read-write, a private
// /tmp and HOME holding only the files its agent CLI reads, its own pid
// namespace, and its own network namespace whose only way out is an
// allowlist proxy run by the trusted process that started it. Only this
// package runs bwrap. What a sandboxed process can and cannot reach, and
// why, is in docs/security-model.md.
//
// Two processes of our own binary take part: the trusted one (the runner
// or the supervisor) opens a Box, which listens on a unix socket in a
// private directory and serves the proxy there, and starts bwrap with
// the stop signals ignored, so a stop reaches the agent with its grace
// instead of killing bwrap and, with it, everything inside at once; and
// Shim, the first process inside, which listens on 127.0.0.1 in the
// sandbox's network namespace, relays to the socket, and starts the
// agent with the proxy in its environment and its signals at their
// defaults.
package sandbox
