// Package secrets holds end-to-end tests of what the wave-orchestrator
// binary keeps from agents and from other users: the environment every
// wave agent and backlog worker starts with (no GitHub token, no notify
// sink's URL, only its executor's credentials), generated settings
// files, dry-run and manifest output, and the modes of every record,
// log and directory under .wave/ whatever the umask.
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package secrets
