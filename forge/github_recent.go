package forge

import (
	"sync"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
)

// listedFresh is how long an issue as ListOpen returned it stands in for
// Get's re-read of it, and its comments as Get read them for
// EnsureComment's look: a use moments after the read learns nothing from
// asking again, one later might (a person edits, labels, deletes).
const listedFresh = 30 * time.Second

// recentReads are facts this Source read moments ago that the next call
// may use once instead of asking GitHub again: an issue from a listing
// (for Get), and an issue's comments from Get (for EnsureComment's look
// for its marker). Each is taken once; a comment created or a create
// whose outcome is unknown drops the issue's comments.
type recentReads struct {
	mu       sync.Mutex
	listed   map[int]listedIssue
	comments map[int]listedComments
	made     map[int]int // comments created on each issue by this Source
	// unreviewed are pull requests whose reviews were listed, with none
	// there, and when: a PR without a review has no review thread.
	unreviewed map[int]time.Time
}

// putReviews notes how many reviews pull request n had when listed at at.
func (r *recentReads) putReviews(n, count int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unreviewed == nil {
		r.unreviewed = map[int]time.Time{}
	}
	delete(r.unreviewed, n)
	if count == 0 {
		r.unreviewed[n] = at
	}
}

// takeUnreviewed: pull request n had no review no longer than
// listedFresh before now (once).
func (r *recentReads) takeUnreviewed(n int, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, ok := r.unreviewed[n]
	delete(r.unreviewed, n)
	return ok && now.Sub(at) <= listedFresh && !now.Before(at)
}

type listedComments struct {
	c  []backlog.Comment
	at time.Time
}

type listedIssue struct {
	is       backlog.Issue
	at       time.Time
	comments int // how many comments the listing said it has
	made     int // comments this Source had created on it then
}

func (r *recentReads) putListed(is backlog.Issue, comments int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.listed == nil {
		r.listed = map[int]listedIssue{}
	}
	r.listed[is.Number] = listedIssue{is: is, at: at, comments: comments, made: r.made[is.Number]}
}

// takeListed is issue n as listed no longer than listedFresh before now;
// uncommented says the listing counted no comment on it and this Source
// has created none since, so there are none to read.
func (r *recentReads) takeListed(n int, now time.Time) (is backlog.Issue, uncommented, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.listed[n]
	delete(r.listed, n)
	if !ok || now.Sub(l.at) > listedFresh || now.Before(l.at) {
		return backlog.Issue{}, false, false
	}
	return l.is, l.comments == 0 && l.made == r.made[n], true
}

// madeOn is how many comments this Source created on issue n: a listing
// begun before one of them may lack it and is not kept.
func (r *recentReads) madeOn(n int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.made[n]
}

// putComments keeps issue n's comments as listed, unless this Source
// created a comment there since the listing began (made changed).
func (r *recentReads) putComments(n int, c []backlog.Comment, made int, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.made[n] != made {
		return
	}
	if r.comments == nil {
		r.comments = map[int]listedComments{}
	}
	r.comments[n] = listedComments{c: append([]backlog.Comment(nil), c...), at: at}
}

// takeComments is issue n's comments as Get read them no longer than
// listedFresh before now, once.
func (r *recentReads) takeComments(n int, now time.Time) ([]backlog.Comment, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.comments[n]
	delete(r.comments, n)
	if !ok || now.Sub(l.at) > listedFresh || now.Before(l.at) {
		return nil, false
	}
	return l.c, true
}

// creating is said before every comment create on issue n (its outcome
// may be unknown): the comments kept for n no longer hold.
func (r *recentReads) creating(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.made == nil {
		r.made = map[int]int{}
	}
	r.made[n]++
	delete(r.comments, n)
}
