// Package watch holds end-to-end tests of the wave-orchestrator binary:
// watching and steering a running lane from a terminal — the dashboard
// session and its keys, attach, stop, status --json, and their backlog
// counterparts (the backlog dashboard, attach-issue, backlog status and
// prune).
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package watch
