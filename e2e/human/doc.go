// Package human holds end-to-end tests of the wave-orchestrator binary:
// a person in the loop — questions and answers in wave and backlog mode
// (ask, answer, the dashboard's answer key) and notifications to hooks
// with no secret written anywhere (serve's page is e2e/serve).
// They run the release build that e2etest.Run makes (see CONTRIBUTING.md).
package human
