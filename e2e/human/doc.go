// Package human holds end-to-end tests of the wave-orchestrator binary:
// a person in the loop — questions and answers in wave and backlog mode
// (ask, answer, the dashboard's answer key), notifications to hooks with
// no secret written anywhere, and serve's page and API in Chromium.
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package human
