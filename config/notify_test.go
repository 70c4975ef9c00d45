package config

import (
	"strings"
	"testing"
)

func TestNotifySinksLoadWithDefaultsAndReachTheLane(t *testing.T) {
	dir := yamlRepo(t, `notify:
  - kind: webhook
    urlEnv: SLACK_HOOK
    events: [question-asked, wave-failed]
  - kind: command
    argv: [notify.sh, --quiet]
  - kind: Desktop
`)
	c := mustLoad(t, dir, nil)
	if len(c.Notify) != 3 {
		t.Fatalf("notify = %+v", c.Notify)
	}
	if c.Notify[0].Name != "webhook-0" || c.Notify[2].Kind != SinkDesktop || c.Notify[2].Name != "desktop-2" {
		t.Errorf("defaults not applied: %+v", c.Notify)
	}
	if !c.Notify[1].Wants("final-pr-opened") || c.Notify[0].Wants("wave-completed") || !c.Notify[0].Wants("wave-failed") {
		t.Errorf("events filter wrong: %+v", c.Notify)
	}
	l, err := c.Lane(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Notify) != 3 || l.Notify[1].Argv[0] != "notify.sh" {
		t.Errorf("lane notify = %+v", l.Notify)
	}
}

func TestBadNotifySinkErrorsNameTheFileLineAndKey(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"notify:\n  - kind: pager\n", "wave.config.yaml:2: notify[0].kind: \"pager\" is not one of command, webhook, desktop"},
		{"notify:\n  - kind: command\n", "notify[0].argv: a command sink needs an argv"},
		{"notify:\n  - kind: webhook\n    urlEnv: 'https://hooks.example/x'\n", "notify[0].urlEnv: a webhook sink needs urlEnv"},
		{"notify:\n  - kind: desktop\n    events: [wave-done]\n", "notify[0].events[0]: \"wave-done\" is not one of"},
		{"notify:\n  - kind: desktop\n    name: me\n  - kind: desktop\n    name: me\n", "notify[1].name: \"me\" names another sink"},
		{"notify:\n  - kind: desktop\n    url: x\n", "notify[0].url: unknown key"},
	} {
		_, err := Load(yamlRepo(t, tc.body), mapEnv(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want it to contain %q", tc.body, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "hooks.example") {
			t.Errorf("the error echoes a URL: %v", err)
		}
	}
}
