// Package drive holds end-to-end tests of the wave-orchestrator binary:
// driving runs from scripts and other tools — submit and wait, retry,
// autonomous, control and status --json contracts, status --wait-change,
// the reference's launch flags, doctor --json, repo-root discovery and
// usage errors, completion, and the release binary itself (version,
// static build, what it links).
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package drive
