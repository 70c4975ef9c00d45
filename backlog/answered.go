package backlog

import (
	"strings"
	"time"
)

// Ways an answer reaches an open run (EvAnswered.Outcome).
const (
	AnsweredCommand = "answer"  // `backlog answer` (or `answer`): its marked comment
	AnsweredComment = "comment" // a person's comment on the issue after the question
	AnsweredLabel   = "label"   // the needs-input label was removed, no answer in words
)

// Answer is the answer an issue's worker got in this run, as recorded.
type Answer struct {
	Question string    `json:"question"`
	Text     string    `json:"text"` // "" when only the label was removed
	By       string    `json:"by"`   // a login, or "" when not known
	Via      string    `json:"via"`  // an Answered* way
	At       time.Time `json:"at"`
}

// InputWait is a run waiting for answers with nothing else left to do:
// from Since until Until (nil: no limit), ended (Ended set) by an answer
// or by giving up.
type InputWait struct {
	Since   time.Time  `json:"since"`
	Until   *time.Time `json:"until"`
	Ended   *time.Time `json:"ended,omitempty"`
	Outcome string     `json:"outcome,omitempty"` // answered | gave-up
}

// markerPrefix starts every hidden marker the supervisor and `backlog
// answer` end their comments with.
const markerPrefix = "<!-- wave-orchestrator:"

// answerMarkerPrefix starts the marker of AnswerComment.
const answerMarkerPrefix = markerPrefix + "answer sha="

// FindAnswer looks on issue is for the answer to the question the
// supervisor asked in the comment ending with ask (written by self; ""
// = any author, as on the local source). The first comment after that
// one counts when it is `backlog answer`'s (its fenced text is the
// answer) or a person's: not a bot's (a login ending in "[bot]") and
// not one of wave-orchestrator's own marked comments. With no such
// comment, the needs-input label gone is an answer without words. The
// text is cleaned of control characters and bounded, never interpreted.
func FindAnswer(is Issue, ask, self, label string) (Answer, bool) {
	from := -1
	for i, c := range is.Comments {
		if endsWith(c.Body, ask) && (self == "" || strings.EqualFold(c.Author, self)) {
			from = i
		}
	}
	if from >= 0 {
		for _, c := range is.Comments[from+1:] {
			if a, ok := commentAnswer(c); ok {
				return a, true
			}
		}
	}
	for _, l := range is.Labels {
		if strings.EqualFold(l, label) {
			return Answer{}, false
		}
	}
	return Answer{Via: AnsweredLabel}, true
}

// commentAnswer is what comment c answers, if it is an answer at all.
func commentAnswer(c Comment) (Answer, bool) {
	body := strings.TrimRight(c.Body, " \t\r\n")
	last := body[strings.LastIndexByte(body, '\n')+1:]
	by := Clean(strings.TrimSpace(c.Author))
	switch {
	case strings.HasPrefix(last, answerMarkerPrefix) && strings.HasSuffix(last, "-->"):
		text, ok := fencedBlock(strings.TrimPrefix(body, AnswerHeading))
		if !ok {
			text = strings.TrimSuffix(body, last)
		}
		return Answer{Text: bound(text), By: by, Via: AnsweredCommand}, true
	case strings.HasPrefix(last, markerPrefix):
		return Answer{}, false // the supervisor's own words (a claim, a park) or a copy of them
	case strings.HasSuffix(strings.ToLower(by), "[bot]"):
		return Answer{}, false
	case strings.TrimSpace(body) == "":
		return Answer{}, false
	}
	return Answer{Text: bound(body), By: by, Via: AnsweredComment}, true
}

func endsWith(body, marker string) bool {
	return marker != "" && strings.HasSuffix(strings.TrimRight(body, " \t\r\n"), marker)
}

// bound cleans an answer and keeps at most MaxAnswer bytes of it (a
// rune cut in two is dropped).
func bound(s string) string {
	s = strings.TrimSpace(Clean(s))
	if len(s) <= MaxAnswer {
		return s
	}
	return strings.ToValidUTF8(s[:MaxAnswer], "")
}
