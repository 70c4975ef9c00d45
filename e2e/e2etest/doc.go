// Package e2etest is what the end-to-end test packages under e2e/ share:
// Run, their TestMain body, builds the wave-orchestrator binary once per
// test process as a release build (CGO_ENABLED=0, -trimpath) inside
// tmuxtest's isolation (no inherited $TMUX, a private TMUX_TMPDIR, every
// tmux server killed at the end); Repo and BacklogRepo are the scratch
// repositories (config, role prompts, wave files; a bare origin and local
// issues) the binary runs in, with helpers that run it and read what it
// wrote; launch.go, terminal.go and soak.go start it in the foreground,
// in the background or to be killed; FakeModel is a fake
// Anthropic Messages API for the real claude CLI; cli.go holds the exit
// codes and JSON shapes the binary promises, as the tests read them.
//
// It drives the binary from outside and imports no command package.
package e2etest
