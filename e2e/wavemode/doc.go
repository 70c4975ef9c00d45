// Package wavemode holds end-to-end tests of the wave-orchestrator binary:
// wave mode through the launcher — launch, wave files' executor, limit and
// resume semantics, closure, adoption after a killed launcher, trust of
// agent and runtime records, preflight, config, signals, init and
// coordination records.
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package wavemode
