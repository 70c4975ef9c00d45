// Package sandbox holds end-to-end tests of the sandbox backlog workers,
// reviewers and verify run in (docs/security-model.md): a worker that
// tries every attack an agent with a shell can — reading the user's SSH
// keys, writing the run's records, connecting to a host that is not
// allowed, killing the supervisor — fails at each while the run merges
// everyone else; verify never sees a token; and the refused hosts reach
// backlog status and the final PR. They run the release build that
// e2etest.Run makes, with bubblewrap (they skip without it, unless
// SANDBOXTEST_REQUIRED is set, as CI sets it).
package sandbox
