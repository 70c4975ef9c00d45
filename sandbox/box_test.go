package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/gitops/gittest"
)

// The test binary doubles as our binary inside the sandbox (the
// shim) and as a scriptable agent that tries things.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "try" {
		os.Exit(try(os.Args[2:]))
	}
	if code, ok := Main(os.Args[1:]); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// try runs each action (verb:arg) and prints one JSON object: action →
// "ok: <detail>" or "err: <error>".
//
//	read:PATH  write:PATH  kill:PID  env:NAME  git:ARGS (space-separated)
//	direct:URL       GET without a proxy
//	proxied:URL      GET through $HTTP_PROXY, even for loopback
//	connect:HOSTPORT a CONNECT through $HTTPS_PROXY
func try(actions []string) int {
	out := map[string]string{}
	for _, a := range actions {
		verb, arg, _ := strings.Cut(a, ":")
		res, err := tryOne(verb, arg)
		if err != nil {
			out[a] = "err: " + err.Error()
		} else {
			out[a] = "ok: " + res
		}
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return 0
}

func tryOne(verb, arg string) (string, error) {
	switch verb {
	case "read":
		b, err := os.ReadFile(arg)
		return string(b), err
	case "write":
		return "", os.WriteFile(arg, []byte("planted"), 0o755)
	case "kill":
		var pid int
		fmt.Sscan(arg, &pid)
		return "", syscall.Kill(pid, syscall.SIGKILL)
	case "env":
		return os.Getenv(arg), nil
	case "git":
		b, err := exec.Command("git", strings.Fields(arg)...).CombinedOutput()
		return strings.TrimSpace(string(b)), err
	case "direct", "proxied":
		tr := &http.Transport{}
		if verb == "proxied" {
			u, err := url.Parse(os.Getenv("HTTP_PROXY"))
			if err != nil {
				return "", err
			}
			tr.Proxy = http.ProxyURL(u)
		}
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		resp, err := c.Get(arg)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b))), nil
	case "connect":
		u, _ := url.Parse(os.Getenv("HTTPS_PROXY"))
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", arg, arg)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return "", err
		}
		return fmt.Sprint(resp.StatusCode), nil
	}
	return "", fmt.Errorf("unknown action %s", verb)
}

// bwrapOrSkip returns bubblewrap, skipping where it cannot work.
func bwrapOrSkip(t *testing.T) string {
	t.Helper()
	bwrap, err := Usable(context.Background())
	if err != nil {
		if os.Getenv("SANDBOXTEST_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return bwrap
}

// counting is a 127.0.0.1 server that counts what reaches it.
func counting(t *testing.T, body string) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// world is a user's machine in miniature: a home with keys and other
// projects, a clone with run state, and a worker checkout.
type world struct {
	home, clone, checkout string
	borrow                []string // the clone's object directories
	env                   []string
}

func newWorld(t *testing.T, shared bool) world {
	t.Helper()
	root := t.TempDir()
	w := world{home: filepath.Join(root, "home"), clone: filepath.Join(root, "home", "src", "repo")}
	files := map[string]string{
		".ssh/id_ed25519":        "PRIVATE KEY",
		".config/gh/hosts.yml":   "oauth_token: gho_secret",
		"other-project/notes.md": "private notes",
		".claude.json":           `{"numStartups": 3}`,
		".gitconfig":             "[user]\n\tname = Ada\n\temail = ada@example.com\n[url \"https://TOKEN@github.com/\"]\n\tinsteadOf = https://github.com/\n",
	}
	for p, c := range files {
		writeFile(t, filepath.Join(w.home, p), c)
	}
	gittest.Init(t, w.clone)
	writeFile(t, filepath.Join(w.clone, "README.md"), "hello\n")
	gittest.Run(t, w.clone, "add", "-A")
	gittest.Run(t, w.clone, "commit", "-qm", "base")
	writeFile(t, filepath.Join(w.clone, ".wave", "lanes", "main", "events.jsonl"), "{}\n")
	w.checkout = filepath.Join(w.home, ".local", "state", "wave-orchestrator", "worktrees", "i1")
	if shared {
		gittest.Run(t, root, "clone", "-q", "--shared", w.clone, w.checkout)
		w.borrow = Borrowed(filepath.Join(w.clone, ".git", "objects"))
	} else {
		gittest.Run(t, w.clone, "worktree", "add", "-q", "-b", "wave-i1", w.checkout)
		w.borrow = Borrowed(filepath.Join(w.clone, ".git", "objects"))
	}
	w.env = []string{"HOME=" + w.home, "PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}
	return w
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// runIn runs the try agent with actions in a box of o and returns its
// results.
func runIn(t *testing.T, o Options, env []string, cwd string, actions ...string) map[string]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	o.Self = self
	box, err := Open(o, env)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	cmd, err := box.Cmd(append([]string{self, "try"}, actions...), env, cwd)
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	if err != nil {
		t.Fatalf("sandboxed run: %v\nargv %q\nstderr:\n%s", err, cmd.Args, stderr.String())
	}
	res := map[string]string{}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("sandboxed run printed %q: %v\nstderr:\n%s", out, err, stderr.String())
	}
	return res
}

func want(t *testing.T, res map[string]string, action, prefix string) {
	t.Helper()
	if got := res[action]; !strings.HasPrefix(got, prefix) {
		t.Errorf("%s: %q, want %q…", action, got, prefix)
	}
}

func TestASandboxedWorkerCannotReadTheUsersSSHKeys(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	w := newWorld(t, true)
	res := runIn(t, Options{Bwrap: bwrap, Checkout: w.checkout, Borrow: w.borrow, GitWritable: true,
		Needs: Needs{Home: []HomeFile{{Env: "CLAUDE_CONFIG_DIR", Path: ".claude.json", Else: ".claude.json"}}}}, w.env, w.checkout,
		"read:"+filepath.Join(w.home, ".ssh/id_ed25519"),
		"read:"+filepath.Join(w.home, ".config/gh/hosts.yml"),
		"read:"+filepath.Join(w.home, "other-project/notes.md"),
		"read:"+filepath.Join(w.clone, ".wave/lanes/main/events.jsonl"),
		"read:"+filepath.Join(w.clone, "README.md"),
		"read:"+filepath.Join(w.home, ".claude.json"),
		"read:"+filepath.Join(w.home, ".gitconfig"),
		"read:"+filepath.Join(w.checkout, "README.md"),
		"write:"+filepath.Join(w.checkout, "new.txt"),
		"write:"+filepath.Join(w.home, ".claude.json"),
		"write:/usr/local/planted",
		"git:commit -q --allow-empty -m inside",
		"git:log -1 --format=%an",
	)
	for _, secret := range []string{".ssh/id_ed25519", ".config/gh/hosts.yml", "other-project/notes.md"} {
		want(t, res, "read:"+filepath.Join(w.home, secret), "err: ")
	}
	want(t, res, "read:"+filepath.Join(w.clone, ".wave/lanes/main/events.jsonl"), "err: ")
	want(t, res, "read:"+filepath.Join(w.clone, "README.md"), "err: ")
	want(t, res, "read:"+filepath.Join(w.home, ".claude.json"), `ok: {"numStartups": 3}`)
	if got := res["read:"+filepath.Join(w.home, ".gitconfig")]; strings.Contains(got, "TOKEN") || !strings.Contains(got, "Ada") {
		t.Errorf("the sandbox's .gitconfig is %q, want the identity and nothing else", got)
	}
	want(t, res, "read:"+filepath.Join(w.checkout, "README.md"), "ok: hello")
	want(t, res, "write:"+filepath.Join(w.checkout, "new.txt"), "ok: ")
	want(t, res, "write:"+filepath.Join(w.home, ".claude.json"), "ok: ")
	want(t, res, "write:/usr/local/planted", "err: ")
	want(t, res, "git:commit -q --allow-empty -m inside", "ok: ")
	want(t, res, "git:log -1 --format=%an", "ok: Ada")
	if b, _ := os.ReadFile(filepath.Join(w.home, ".claude.json")); string(b) != `{"numStartups": 3}` {
		t.Errorf("the sandbox's write reached the user's .claude.json: %q", b)
	}
	if _, err := os.Stat(filepath.Join(w.checkout, "new.txt")); err != nil {
		t.Errorf("the checkout's write is not in the checkout: %v", err)
	}
}

func TestALegacyWorktreeCommitsButPlantsNoHookOrConfig(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	w := newWorld(t, false)
	common := filepath.Join(w.clone, ".git")
	res := runIn(t, Options{Bwrap: bwrap, Checkout: w.checkout, Borrow: w.borrow, GitWritable: true}, w.env, w.checkout,
		"git:commit -q --allow-empty -m inside",
		"write:"+filepath.Join(common, "hooks", "pre-push"),
		"write:"+filepath.Join(common, "config"),
		"git:config core.fsmonitor /tmp/evil",
		"write:"+filepath.Join(common, "worktrees", "other"),
		"read:"+filepath.Join(w.clone, "README.md"),
	)
	want(t, res, "git:commit -q --allow-empty -m inside", "ok: ")
	want(t, res, "write:"+filepath.Join(common, "hooks", "pre-push"), "err: ")
	want(t, res, "write:"+filepath.Join(common, "config"), "err: ")
	want(t, res, "git:config core.fsmonitor /tmp/evil", "err: ")
	want(t, res, "write:"+filepath.Join(common, "worktrees", "other"), "err: ")
	want(t, res, "read:"+filepath.Join(w.clone, "README.md"), "err: ")
	if got := gittest.Run(t, w.checkout, "log", "-1", "--format=%s"); got != "inside" {
		t.Errorf("the commit made inside is not on the worktree's branch: %q", got)
	}
	if _, err := os.Stat(filepath.Join(common, "hooks", "pre-push")); err == nil {
		t.Error("a hook planted inside the sandbox is in the user's clone")
	}
}

func TestASandboxedWorkerReachesOnlyAllowedHosts(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	w := newWorld(t, true)
	model, modelHits := counting(t, "model")
	other, otherHits := counting(t, "other")
	var mu sync.Mutex
	var refused []string
	res := runIn(t, Options{Bwrap: bwrap, Checkout: w.checkout, Borrow: w.borrow, GitWritable: true,
		Needs: Needs{EndpointEnv: []string{"ANTHROPIC_BASE_URL"}},
		Refused: func(hostport, why string) {
			mu.Lock()
			refused = append(refused, hostport+" "+why)
			mu.Unlock()
		}}, append(w.env, "ANTHROPIC_BASE_URL="+model.URL), w.checkout,
		"direct:"+model.URL+"/v1",
		"proxied:"+model.URL+"/v1",
		"direct:"+other.URL,
		"proxied:"+other.URL,
		"connect:"+strings.TrimPrefix(other.URL, "http://"),
		"connect:example.com:443",
		"direct:http://93.184.216.34/",
	)
	want(t, res, "direct:"+model.URL+"/v1", "ok: 200 model")
	want(t, res, "proxied:"+model.URL+"/v1", "ok: 200 model")
	want(t, res, "direct:"+other.URL, "err: ")
	want(t, res, "proxied:"+other.URL, "ok: 403")
	want(t, res, "connect:"+strings.TrimPrefix(other.URL, "http://"), "ok: 403")
	want(t, res, "connect:example.com:443", "ok: 403")
	want(t, res, "direct:http://93.184.216.34/", "err: ")
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the server that is not allowed received %d requests", n)
	}
	if n := modelHits.Load(); n != 2 {
		t.Errorf("the model endpoint received %d requests, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	otherHost := strings.TrimPrefix(other.URL, "http://")
	if len(refused) != 2 || !strings.HasPrefix(refused[0], otherHost+" ") || !strings.HasPrefix(refused[1], "example.com:443 ") {
		t.Errorf("refused %q, want %s and example.com:443 once each", refused, otherHost)
	}
}

func TestASandboxedWorkerCannotSeeOrKillTheSupervisor(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	w := newWorld(t, true)
	me := fmt.Sprint(os.Getpid())
	res := runIn(t, Options{Bwrap: bwrap, Checkout: w.checkout, Borrow: w.borrow, Network: NetNone}, w.env, w.checkout,
		"kill:"+me, "read:/proc/"+me+"/environ")
	want(t, res, "kill:"+me, "err: ")
	want(t, res, "read:/proc/"+me+"/environ", "err: ")
}

// A reviewer's or verify's checkout (a worktree of the user's clone, its
// git metadata read-only) can still run what writes only the worktree's
// own index (status, diff, checkout of a file), and cannot commit or
// touch the clone.
func TestAReadOnlyWorktreeStillRestoresAFile(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	w := newWorld(t, false)
	writeFile(t, filepath.Join(w.checkout, "README.md"), "changed\n")
	res := runIn(t, Options{Bwrap: bwrap, Checkout: w.checkout, Borrow: w.borrow}, w.env, w.checkout,
		"git:status --porcelain", "git:diff --stat", "git:checkout -- README.md", "read:"+filepath.Join(w.checkout, "README.md"),
		"git:commit -qam inside",
		"write:"+filepath.Join(w.clone, ".git", "hooks", "pre-push"))
	want(t, res, "git:status --porcelain", "ok: M README.md")
	want(t, res, "git:diff --stat", "ok: README.md")
	want(t, res, "git:checkout -- README.md", "ok: ")
	want(t, res, "read:"+filepath.Join(w.checkout, "README.md"), "ok: hello")
	want(t, res, "git:commit -qam inside", "err: ")
	want(t, res, "write:"+filepath.Join(w.clone, ".git", "hooks", "pre-push"), "err: ")
}

// A worker writes the user's secret directories into its clone's
// alternates, or turns its .git into a file naming another repository,
// and fails: its next sandbox (a relaunch in the same checkout) mounts
// none of them — only the clone's own object directories are borrowed.
func TestWhatAWorkersGitNamesIsNeverMountedInItsNextSandbox(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	w := newWorld(t, true)
	alt := filepath.Join(w.checkout, ".git", "objects", "info", "alternates")
	f, err := os.OpenFile(alt, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "%s\n%s\n", filepath.Join(w.home, ".ssh"), filepath.Join(w.home, "other-project"))
	f.Close()
	o := Options{Bwrap: bwrap, Checkout: w.checkout, Borrow: w.borrow, GitWritable: true}
	res := runIn(t, o, w.env, w.checkout, "read:"+filepath.Join(w.home, ".ssh/id_ed25519"),
		"read:"+filepath.Join(w.home, "other-project/notes.md"), "git:log -1 --format=%s")
	want(t, res, "read:"+filepath.Join(w.home, ".ssh/id_ed25519"), "err: ")
	want(t, res, "read:"+filepath.Join(w.home, "other-project/notes.md"), "err: ")
	if got := res["git:log -1 --format=%s"]; !strings.HasPrefix(got, "ok: ") || !strings.HasSuffix(got, "base") {
		t.Errorf("git in the clone, its borrowed objects: %q, want the base commit", got)
	}

	// A .git file naming the user's home as its git directory.
	if err := os.Rename(filepath.Join(w.checkout, ".git"), filepath.Join(w.checkout, ".git-real")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.checkout, ".git"), "gitdir: "+filepath.Join(w.home, ".ssh")+"\n")
	o.Self, _ = os.Executable()
	box, err := Open(o, w.env)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	if _, err := box.Cmd([]string{o.Self, "try"}, w.env, w.checkout); err == nil {
		t.Errorf("a checkout whose .git names %s/.ssh got a sandbox", w.home)
	}
}

// A wave agent's checkout is the user's repository itself: it commits
// there, but plants nothing the user's own git would run later — no
// hook, no config, no alternates.
func TestAnAgentInTheUsersRepositoryPlantsNoHookOrConfig(t *testing.T) {
	t.Parallel()
	bwrap := bwrapOrSkip(t)
	w := newWorld(t, true)
	dotgit := filepath.Join(w.clone, ".git")
	res := runIn(t, Options{Bwrap: bwrap, Checkout: w.clone, Borrow: RepositoryBorrowed(w.clone), GitWritable: true}, w.env, w.clone,
		"git:commit -q --allow-empty -m inside",
		"write:"+filepath.Join(dotgit, "hooks", "pre-commit"),
		"git:config core.fsmonitor /tmp/evil",
		"write:"+filepath.Join(dotgit, "objects", "info", "alternates"),
		"write:"+filepath.Join(dotgit, "info", "attributes"),
	)
	want(t, res, "git:commit -q --allow-empty -m inside", "ok: ")
	for _, a := range []string{"write:" + filepath.Join(dotgit, "hooks", "pre-commit"), "git:config core.fsmonitor /tmp/evil",
		"write:" + filepath.Join(dotgit, "objects", "info", "alternates"), "write:" + filepath.Join(dotgit, "info", "attributes")} {
		want(t, res, a, "err: ")
	}
	if got := gittest.Run(t, w.clone, "log", "-1", "--format=%s"); got != "inside" {
		t.Errorf("the commit made inside is not in the repository: %q", got)
	}
}
