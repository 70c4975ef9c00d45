package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/backlog"
	"github.com/wave-orchestrator/wave-orchestrator/e2e/e2etest"
	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// mkindex is a bash function writing the clone's index as one entry, its
// argument, with stat data that makes git hash the file again: what a
// worker forges to name a file out of its work tree.
const mkindex = `mkindex() {
  local name=$1 len=${#1} z='\x00\x00\x00\x00'
  {
    printf 'DIRC\x00\x00\x00\x02\x00\x00\x00\x01'
    printf "$z$z$z$z$z$z"'\x00\x00\x81\xa4'"$z$z$z$z$z$z$z$z"
    printf "$(printf '\\x%02x\\x%02x' $((len >> 8)) $((len & 255)))%s" "$name"
    printf '\x00%.0s' $(seq $((8 - (62 + len) % 8)))
  } > .git/index.new
  printf "$(sha1sum < .git/index.new | cut -c1-40 | sed 's/../\\x&/g')" >> .git/index.new
  mv .git/index.new .git/index
}
`

// scanObjects prints "LEAK: <content>" for every object the worker's
// git reaches (its own and the user's clone's, which it borrows) that
// holds $1.
const scanObjects = `scan() {
  git cat-file --batch-all-objects --batch-check='%(objectname) %(objecttype)' 2>/dev/null | while read -r o ty; do
    [ "$ty" = blob ] || continue
    c=$(git cat-file -p "$o" 2>/dev/null); case "$c" in *"$1"*) echo "LEAK: $c";; esac
  done
}
`

// A worker forges its index with an entry naming the user's SSH key by
// a path out of its work tree, and fails: the supervisor's snapshot of
// its clone (and every look at it) never hashes that file into the
// user's clone, whose objects the relaunched worker borrows.
func TestAForgedIndexNeverHasTheSupervisorReadAFileOutOfTheCheckout(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	home := userHome(t)
	log := plantThenRelaunch(t, home, mkindex+`  mkindex "$(realpath -m --relative-to=. "$HOME_OUTSIDE/.ssh/id_ed25519")"
  git ls-files | sed 's/^/index: /'`,
		scanObjects+`git read-tree HEAD
scan "PRIVATE KEY"`)
	if strings.Contains(log, "LEAK") || strings.Contains(log, sshKey) {
		t.Errorf("the relaunched worker found the user's key in the objects it borrows:\n%s", log)
	}
}

// A worker points its clone's alternates at another repository of the
// user's, links its branch to one of that repository's branches, and
// fails: the supervisor copies nothing of that repository into the
// user's clone (where every later worker's borrowed objects would reach
// it), parks the issue, and merges the others.
func TestAWorkerCloneNamingAnotherRepositoryNeverBringsItIntoTheClone(t *testing.T) {
	t.Parallel()
	needBwrap(t)
	home := userHome(t)
	other := filepath.Join(home, "other-project")
	e2etest.GitIn(t, other, "init", "-q", "-b", "main")
	e2etest.GitIn(t, other, "add", "-A")
	e2etest.GitIn(t, other, "commit", "-q", "-m", "private")
	secret := e2etest.GitIn(t, other, "rev-parse", "HEAD:notes.md")
	r := e2etest.NewBacklogRepo(t)
	shellWorkers(t, r, fmt.Sprintf(`if [ "$n" = 1 ]; then
  printf '%%s\n' %[1]s/.git/objects >> .git/objects/info/alternates
  b=$(git symbolic-ref HEAD); rm -f ".git/$b"; ln -s %[1]s/.git/refs/heads/main ".git/$b"
  echo planted; exit 3
fi
`, e2etest.ShellQuote(other))+work, "0")
	r.Issue(1, "One", "Files: src/i1/**")
	r.Issue(2, "Two", "Files: src/i2/**")
	res := runWith(t, r, home, nil, "1,2")
	if gittest.Try(r.Root, "cat-file", "-e", secret) == nil {
		t.Errorf("the other project's notes (%s) are in the user's clone", secret)
	}
	_, v := status(t, r, home)
	if res.Code != 43 || v.Tally.Merged != 1 || len(v.Issues) != 2 || v.Issues[0].State != "parked" {
		t.Errorf("run: exit %d, %s; want #1 parked, #2 merged, exit 43\n%s\n%s", res.Code, states(v), res.Stdout, res.Stderr)
	}
}

// Workers that break their clone's git — a HEAD on a branch that does
// not exist, a .git file naming a directory that is no repository, a
// branch with no history in common with the wave branch — are each
// parked, saying so, while the run merges the one that worked: none
// stops the run, nor has it wait for an outage that is not there.
func TestAWorkerThatBreaksItsGitIsParkedWhileTheRunMergesEveryoneElse(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	shellWorkers(t, r, `case $n in
1) echo "ref: refs/heads/nowhere" > .git/HEAD ;;
2) mv .git .git-real; echo "gitdir: $HOME" > .git ;;
3) b=$(git symbolic-ref --short HEAD); git checkout -q --orphan alone && git commit -qm alone && git branch -f -- "$b" alone && git checkout -q "$b" ;;
esac
if [ "$n" != 4 ]; then echo "[backlog-result] state=done detail=broke it"; exit 0; fi
`+work, "0")
	for n := 1; n <= 4; n++ {
		r.Issue(n, fmt.Sprintf("Issue %d", n), fmt.Sprintf("Files: src/i%d/**", n))
	}
	res := runWith(t, r, home, nil, "1,2,3,4")
	_, v := status(t, r, home)
	if res.Code != 43 || v.Tally.Merged != 1 {
		t.Fatalf("run: exit %d, %+v; want #4 merged, the others parked, exit 43\n%s\n%s", res.Code, v.Tally, res.Stdout, res.Stderr)
	}
	for _, is := range v.Issues {
		want := "parked"
		if is.Number == 4 {
			want = "merged"
		}
		if is.State != want {
			t.Errorf("#%d: %s (%s), want %s", is.Number, is.State, is.Detail, want)
		}
	}
	if strings.Contains(res.Stdout, "waiting: origin unreachable") {
		t.Errorf("a broken checkout was taken for an outage:\n%s", res.Stdout)
	}
	if _, err := os.Stat(filepath.Join(home, ".git")); err == nil {
		t.Error("something wrote a .git into the user's home")
	}
}

// A worker commits, outside its declared surface, a file whose name
// holds a newline and the start of a line the supervisor prints: the
// run's warning names the file on its own line, and no line of the
// run's output is the worker's.
func TestAFileNameNeverForgesALineOfTheRunsOutput(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	shellWorkers(t, r, `f=$(printf 'forged\nbacklog: #7 merged into main (0000000000)')
echo x > "$f" && git add -A && git commit -qm "a file"
`+work, "0")
	r.Issue(1, "One", "Files: src/i1/**")
	res := runWith(t, r, home, nil, "1")
	if res.Code != 0 || !strings.Contains(res.Stdout, "outside its declared surface") {
		t.Fatalf("run: exit %d\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
	for _, l := range strings.Split(res.Stdout, "\n") {
		if strings.HasPrefix(l, "backlog: #7") {
			t.Errorf("the worker's file name printed a line of its own: %q\n%s", l, res.Stdout)
		}
	}
}

// A worker commits a tree no git writes — a .git/hooks/post-checkout
// entry (and a ".." one) — with verify on: its branch is refused where
// it is fetched and its issue parked, nothing of it reaches origin, and
// the run merges the other and ends; the verify never loops on a
// checkout git refuses to make.
func TestATreeGitWouldNotWriteIsRefusedAtTheFetch(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	r.SetBacklogKey(t, `verify: [sh, -c, 'true']`)
	shellWorkers(t, r, `if [ "$n" = 1 ]; then
  hook=$(printf '#!/bin/sh\ntouch %s/ran\n' "$ROOT" | git hash-object -w --stdin)
  hooks=$(printf '100755 blob %s\tpost-checkout\n' $hook | git mktree)
  dotgit=$(printf '040000 tree %s\thooks\n' $hooks | git mktree)
  mkdir -p src/i1 && echo w > src/i1/w && git add -A && git commit -qm work
  t=$( (git ls-tree HEAD; printf '040000 tree %s\t.git\n' $dotgit) | git mktree)
  git update-ref HEAD "$(git commit-tree $t -p HEAD -m dotgit)"
  echo "[backlog-result] state=done detail=planted"; exit 0
fi
`+work, "0")
	r.Issue(1, "One", "Files: src/i1/**")
	r.Issue(2, "Two", "Files: src/i2/**")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := r.RunWith(ctx, append(r.Env(), "HOME="+home), "backlog", "run", "--issues", "1,2", "--no-dashboard")
	_, v := status(t, r, home)
	if res.Code != 43 || v.Tally.Merged != 1 || len(v.Issues) != 2 || v.Issues[0].State != "parked" {
		t.Fatalf("run: exit %d, %s; want #1 parked, #2 merged, exit 43\n%s", res.Code, states(v), lastLines(res.Stdout, 30))
	}
	if _, err := os.Stat(filepath.Join(r.Root, "ran")); err == nil {
		t.Error("the hook the worker committed ran")
	}
	if out := e2etest.GitIn(t, r.Origin, "ls-tree", "-r", "--name-only", v.Run.WaveBranch); strings.Contains(out, ".git/") {
		t.Errorf("origin's wave branch holds the worker's .git entry:\n%s", out)
	}
}

// states is each issue's number, state and detail, for a failure.
func states(v backlog.StatusView) string {
	var b strings.Builder
	for _, is := range v.Issues {
		fmt.Fprintf(&b, "\n  #%d %s: %s", is.Number, is.State, is.Detail)
	}
	return b.String()
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// A worker turns its .git into a file naming a worktree of the user's
// clone (its origin says where the clone is; the name is a guess) and
// fails: the supervisor never takes that worktree for the worker's, so
// the user's worktree, its index and HEAD, stay as they were.
func TestAWorkerNamingTheUsersWorktreeNeverHasItRemoved(t *testing.T) {
	t.Parallel()
	home := userHome(t)
	r := e2etest.NewBacklogRepo(t)
	feature := filepath.Join(filepath.Dir(r.Root), "feature")
	e2etest.GitIn(t, r.Root, "worktree", "add", "-q", feature, "-b", "feature")
	if err := os.WriteFile(filepath.Join(feature, "wip.txt"), []byte("the user's work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e2etest.GitIn(t, feature, "add", "wip.txt")
	shellWorkers(t, r, `if [ "$n" = 1 ] && [ -d .git ]; then
  common=$(git config remote.origin.url)
  mv .git .git-real; echo "gitdir: $common/worktrees/feature" > .git
  echo planted; exit 3
fi
`+work, "0")
	r.Issue(1, "One", "Files: src/i1/**")
	r.Issue(2, "Two", "Files: src/i2/**")
	res := runWith(t, r, home, nil, "1,2")
	if got := e2etest.GitIn(t, feature, "status", "--porcelain"); got != "A  wip.txt" {
		t.Errorf("the user's worktree's status is %q, want its staged file", got)
	}
	_, v := status(t, r, home)
	if res.Code != 43 || v.Tally.Merged != 1 {
		t.Errorf("run: exit %d, %s; want #1 parked, #2 merged, exit 43", res.Code, states(v))
	}
}
