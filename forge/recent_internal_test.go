package forge

import (
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// A comment this Source posts while Get's listing is in flight may be
// missing from what that listing returns: the listing is not kept, so the
// next ensure of its marker looks again rather than posting it twice.
func TestCommentsListedBeforeOwnPostAreNeverKept(t *testing.T) {
	var r recentReads
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	before := r.madeOn(1)
	r.creating(1) // the post, while the listing is in flight
	r.putComments(1, []backlog.Comment{}, before, at)
	if _, ok := r.takeComments(1, at); ok {
		t.Fatal("a listing begun before this Source's own post was kept")
	}
	r.putComments(1, []backlog.Comment{{Body: "x"}}, r.madeOn(1), at)
	r.creating(1)
	if _, ok := r.takeComments(1, at); ok {
		t.Fatal("comments kept across this Source's own post")
	}
	r.putComments(1, []backlog.Comment{{Body: "x"}}, r.madeOn(1), at)
	if _, ok := r.takeComments(1, at.Add(listedFresh+time.Second)); ok {
		t.Fatal("comments read long ago stood in for a look")
	}
	r.putComments(1, []backlog.Comment{{Body: "x"}}, r.madeOn(1), at)
	if c, ok := r.takeComments(1, at.Add(time.Second)); !ok || len(c) != 1 {
		t.Fatal("comments read a second ago were not used")
	}
}

func TestListedIssueIsUsedOnceAndOnlyWhileFresh(t *testing.T) {
	var r recentReads
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	r.putListed(backlog.Issue{Number: 3}, 0, at)
	if _, _, ok := r.takeListed(3, at.Add(listedFresh+time.Second)); ok {
		t.Error("a stale listing was used")
	}
	r.putListed(backlog.Issue{Number: 3}, 0, at)
	if _, _, ok := r.takeListed(3, at.Add(time.Second)); !ok {
		t.Error("a fresh listing was not used")
	}
	if _, _, ok := r.takeListed(3, at.Add(time.Second)); ok {
		t.Error("a listing was used twice")
	}
}
