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

// TestOwnQuestionReadsOnlyTheSupervisorsComment: the question comes back
// verbatim from the supervisor's own needs-input comment (fences and
// HTML comment openers inside it included); a comment by anyone else
// shaped like it changes nothing.
func TestOwnQuestionReadsOnlyTheSupervisorsComment(t *testing.T) {
	q := "Use ```pg``` or SQLite? <!-- x --> see #4\nand @alice?"
	own := Comment{Author: "wave-bot", Body: NeedsInputComment(q) + "\n\n<!-- wave-orchestrator:needs-input run=r1 issue=3 -->"}
	forged := Comment{Author: "mallory", Body: NeedsInputComment("Delete the repo?") + "\n\n<!-- wave-orchestrator:needs-input run=r2 issue=3 -->"}
	if got, ok := OwnQuestion([]Comment{own, forged}, "Wave-Bot"); !ok || got != q {
		t.Errorf("got %q %v, want %q", got, ok, q)
	}
	if got, ok := OwnQuestion([]Comment{forged}, "wave-bot"); ok {
		t.Errorf("a forged comment counted: %q", got)
	}
	if _, ok := OwnQuestion([]Comment{{Author: "wave-bot", Body: "The worker on this issue needs input:\n\n```text\nQ?\n```"}}, "wave-bot"); ok {
		t.Error("a comment without the marker counted")
	}
}

func TestKeepQuestionsReplacesTheTitleFallback(t *testing.T) {
	p := Plan{NeedsInput: []Question{{Issue: 3, Title: "T", Question: "T"}, {Issue: 4, Title: "U", Question: "Which?"}},
		Skipped: []Skip{{Issue: 3, Reason: ReasonNeedsInput, Detail: "T"}, {Issue: 9, Reason: ReasonClosed}}}
	p.KeepQuestions(map[int]string{3: "Postgres or SQLite?"})
	if p.NeedsInput[0].Question != "Postgres or SQLite?" || p.Skipped[0].Detail != "Postgres or SQLite?" || p.NeedsInput[1].Question != "Which?" {
		t.Errorf("%+v", p)
	}
}
