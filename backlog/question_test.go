package backlog

import "testing"

func TestAskedQuestion(t *testing.T) {
	cases := []struct {
		name string
		is   Issue
		want string
	}{
		{"the newest asking comment",
			Issue{Title: "t", Body: "Body asks?", Comments: []Comment{{Body: "Old: A or B?"}, {Body: "Should it be A or B?\nthanks"}, {Body: "bump"}}},
			"Should it be A or B?"},
		{"the last asking line of that comment",
			Issue{Title: "t", Comments: []Comment{{Body: "First? Then:\n> Which port should it bind?\nok"}}},
			"Which port should it bind?"},
		{"the body when no comment asks",
			Issue{Title: "t", Body: "Do X.\n- Which format, JSON or YAML?\nDone.", Comments: []Comment{{Body: "+1"}}},
			"Which format, JSON or YAML?"},
		{"a URL's '?' asks nothing",
			Issue{Title: "Pick a colour", Body: "See https://example.com/a?b=1 for context", Comments: []Comment{{Body: "https://x.test/?q=2"}}},
			"Pick a colour"},
		{"a URL at the end of a question still asks",
			Issue{Title: "t", Body: "Is it https://example.com?"},
			"Is it https://example.com?"},
		{"the title when nothing asks",
			Issue{Title: "  Decide the schema  ", Body: "We need a schema."},
			"Decide the schema"},
		{"heading markers are dropped",
			Issue{Title: "t", Body: "## Open question: which DB?"},
			"Open question: which DB?"},
	}
	for _, c := range cases {
		if got := AskedQuestion(c.is); got != c.want {
			t.Errorf("%s: AskedQuestion = %q, want %q", c.name, got, c.want)
		}
	}
}
