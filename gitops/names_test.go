package gitops

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestBranchSlug(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 60) // 300 chars
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"Fix the login page", 40, "fix-the-login-page"},
		{"$(rm -rf /); `id` && echo $HOME | cat > x", 40, "rm-rf-id-echo-home-cat-x"},
		{"../../etc/passwd", 40, "etc-passwd"},
		{"feature/..lock.lock", 40, "feature-lock-lock"},
		{"Ünïcödé — naïve café 日本語", 40, "n-c-d-na-ve-caf"},
		{"日本語", 40, "issue"},
		{"", 40, "issue"},
		{"--force", 40, "force"},
		{"a@{-1}b", 40, "a-1-b"},
		{"ends with dash at the cut here", 9, "ends-with"},
		{"abcdefghij", 4, "abcd"},
		{long, 0, strings.TrimSuffix(strings.Repeat("word-", 8), "-")},
	}
	valid := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	for _, c := range cases {
		got := BranchSlug(c.in, c.max)
		if got != c.want {
			t.Errorf("BranchSlug(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
		max := c.max
		if max <= 0 {
			max = DefaultSlugMax
		}
		if !valid.MatchString(got) || len(got) > max {
			t.Errorf("BranchSlug(%q) = %q: not a short [a-z0-9-] slug", c.in, got)
		}
		if err := CheckRefFormat(context.Background(), "wave/2025-01-01-x-i7-"+got); err != nil {
			t.Errorf("branch from %q rejected: %v", c.in, err)
		}
	}
}

func TestCheckRefFormat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, ok := range []string{"main", "wave/2025-01-01-backlog", "wave/2025-01-01-backlog-i12"} {
		if err := CheckRefFormat(ctx, ok); err != nil {
			t.Errorf("%q rejected: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "a..b", "a b", "a~1", "a^", "a:b", "x.lock", "a/", "@{-1}", "a\nb", "a*", "wave/../x"} {
		if err := CheckRefFormat(ctx, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A branch name that would show on a terminal in another order than it
// has (a right-to-left override), or that hides characters, is refused
// before git sees it, and the error shows the mark escaped.
func TestBranchNameWithABidiOverrideOrInvisibleTextIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{"fix\u202etxt.exe", "wave/a\u2066b\u2069", "ad\u200bmin", "x\U000e0041"} {
		err := CheckRefFormat(ctx, name)
		if err == nil {
			t.Errorf("%q accepted", name)
			continue
		}
		if msg := err.Error(); strings.ContainsFunc(msg, func(r rune) bool { return r > 0x7e }) || !strings.Contains(msg, `\u`) && !strings.Contains(msg, `\U`) {
			t.Errorf("%q: error %q does not show the mark escaped", name, msg)
		}
	}
}

func TestCheckBranchAsksGitOncePerName(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	ctx := ctxT(t)
	before := r.Calls()
	for range 3 {
		if err := r.checkBranch(ctx, "wave/2025-01-01-backlog"); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Calls() - before; got != 1 {
		t.Errorf("three checks of one valid name ran git %d times, want 1", got)
	}
	for range 2 {
		if err := r.checkBranch(ctx, "a..b"); err == nil {
			t.Fatal("a..b accepted")
		}
	}
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]int{
		"git version 2.39.5\n":                 {2, 39},
		"git version 2.38.0.windows.1":         {2, 38},
		"git version 2.39.3 (Apple Git-146)\n": {2, 39},
		"git version 3.0\n":                    {3, 0},
	} {
		ma, mi, err := parseVersion(in)
		if err != nil || ma != want[0] || mi != want[1] {
			t.Errorf("parseVersion(%q) = %d.%d, %v", in, ma, mi, err)
		}
	}
	for _, bad := range []string{"", "hub version 2", "git version x.y", "git version 2"} {
		if _, _, err := parseVersion(bad); err == nil {
			t.Errorf("parseVersion(%q) accepted", bad)
		}
	}
}

func TestVersionIsNewEnough(t *testing.T) {
	t.Parallel()
	ma, mi, err := Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ma < 2 || ma == 2 && mi < 38 {
		t.Fatalf("git %d.%d: merge-tree --write-tree needs 2.38", ma, mi)
	}
}

// TestEnvIsolated: a GIT_DIR or GIT_INDEX_FILE inherited from a hook, or a
// foreign locale, must not redirect or reword our calls.
func TestEnvIsolated(t *testing.T) {
	origin := newOrigin(t)
	r := newClone(t, origin)
	t.Setenv("GIT_DIR", origin)
	t.Setenv("GIT_INDEX_FILE", "/nonexistent/index")
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	t.Setenv("LANG", "de_DE.UTF-8")
	r2, err := Open(ctxT(t), r.Dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Dir != r.Dir {
		t.Fatalf("Open resolved %s, want %s", r2.Dir, r.Dir)
	}
	if n, err := r2.DirtyFiles(ctxT(t), r.Dir); err != nil || n != 0 {
		t.Fatalf("DirtyFiles = %d, %v", n, err)
	}
}

func TestErrorsCarryStderrAndCount(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	before := r.Calls()
	_, err := r.git(ctxT(t), r.Dir, "cat-file", "commit", "0123456789abcdef0123456789abcdef01234567")
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != 128 || !strings.Contains(err.Error(), "fatal:") || strings.HasSuffix(ge.Stderr, "\n") {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), r.Dir) {
		t.Fatalf("error does not name the repository: %v", err)
	}
	if r.Calls() != before+1 {
		t.Fatalf("Calls went from %d to %d", before, r.Calls())
	}
	if _, err := Open(ctxT(t), t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "not a git repository") {
		t.Fatalf("Open outside a repository: %v", err)
	}
}

func TestTimeoutBoundsEveryCall(t *testing.T) {
	t.Parallel()
	r := newClone(t, newOrigin(t))
	r.rn.timeout = time.Nanosecond
	_, err := r.RevParse(ctxT(t), "HEAD")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
}

func TestParsePush(t *testing.T) {
	t.Parallel()
	cases := []struct {
		out      string
		flag     byte
		rejected string
	}{
		{"To /o.git\n*\tabc:refs/heads/x\t[new branch]\nDone\n", '*', ""},
		{"To /o.git\n=\tabc:refs/heads/x\t[up to date]\nDone\n", '=', ""},
		{"To /o.git\n!\tabc:refs/heads/x\t[rejected] (stale info)\nDone\n", '!', "[rejected] (stale info)"},
		{"To /o.git\n!\t(delete):refs/heads/x\t[remote rejected] (failed to update ref)\nDone\n", '!', "[remote rejected] (failed to update ref)"},
		{"To /o.git\n-\t:refs/heads/x\t[deleted]\nDone\n", '-', ""},
	}
	for _, c := range cases {
		res, ok := parsePush(c.out)
		if !ok || res.flag != c.flag || res.rejected() != c.rejected {
			t.Errorf("parsePush(%q) = %+v %v", c.out, res, ok)
		}
	}
	if _, ok := parsePush("fatal: could not read from remote\n"); ok {
		t.Error("status found in an error")
	}
}
