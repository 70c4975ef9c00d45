// Package backlogrun holds end-to-end tests of the wave-orchestrator binary:
// backlog runs through the binary against a bare origin and local issues or
// the fake GitHub, and what they survive — kill -9 anywhere, a crash at
// the wave push or while opening, GitHub outages overnight — with
// exactly one of every external write.
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package backlogrun
