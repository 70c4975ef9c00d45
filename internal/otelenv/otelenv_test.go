package otelenv

import "testing"

func TestAgentAttributesJoinTheUsersOwn(t *testing.T) {
	ours := []KV{{Lane, "main"}, {Agent, "A1"}, {Issue, ""}}
	cases := []struct{ name, user, want string }{
		{"none of the user's", "", "wave.lane=main,wave.agent=A1"},
		{"the user's kept first", "team=infra, deployment.environment=ci", "team=infra,deployment.environment=ci,wave.lane=main,wave.agent=A1"},
		{"an inherited wave key replaced", "wave.lane=outer,team=infra", "team=infra,wave.lane=main,wave.agent=A1"},
		{"a malformed entry kept verbatim", "justakey,,team=x", "justakey,team=x,wave.lane=main,wave.agent=A1"},
	}
	for _, c := range cases {
		if got := Merge(c.user, ours); got != c.want {
			t.Errorf("%s: Merge(%q) = %q, want %q", c.name, c.user, got, c.want)
		}
	}
}

func TestAttributeValuesThatBreakTheListAreEncoded(t *testing.T) {
	for in, want := range map[string]string{
		"plain-lane_1.x": "plain-lane_1.x",
		"a,b=c":          "a%2Cb=c",
		"sp ace;\"%\\":   "sp%20ace%3B%22%25%5C",
		"é":              "%C3%A9",
		"line\nbreak":    "line%0Abreak",
	} {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}
