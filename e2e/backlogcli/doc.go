// Package backlogcli holds end-to-end tests of the wave-orchestrator binary:
// the backlog commands' edges — unknown issues, width, stop, no origin,
// unpushed commits, plan, diff, doctor's backlog checks — the declared
// surface, and the real claude CLI as the worker against the fake model.
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package backlogcli
