// Package serve holds end-to-end tests of `wave-orchestrator serve`: its
// page driven in a real headless Chromium (the human loop, a read-only
// backlog, a lane of ten waves of twenty agents kept to one screen) and
// its API. They run the release build that e2etest.Run makes (see
// CONTRIBUTING.md).
package serve
