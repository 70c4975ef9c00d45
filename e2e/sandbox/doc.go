// Package sandbox holds end-to-end tests of the sandbox backlog workers,
// reviewers and verify run in (docs/security-model.md): a worker that
// tries every attack an agent with a shell can — reading the user's SSH
// keys, writing the run's records, connecting to a host that is not
// allowed, killing the supervisor — fails at each while the run merges
// everyone else; verify never sees a token; and the refused hosts reach
// backlog status and the final PR. A worker that forges or breaks its
// clone's git (alternates, a .git file, a forged index, a linked ref, a
// tree git never writes, an orphan branch, a file name with a newline)
// gets nothing of the user's through the supervisor and its next
// sandbox, and only its own issue is parked. They run the release build that
// e2etest.Run makes, with bubblewrap (they skip without it, unless
// SANDBOXTEST_REQUIRED is set, as CI sets it).
package sandbox
