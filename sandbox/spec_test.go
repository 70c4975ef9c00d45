package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestArgsMountEveryDirectoryBeforeWhatLandsInIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{
			name: "a checkout under HOME lands on the private HOME",
			spec: Spec{Bwrap: "/usr/bin/bwrap", Cwd: "/home/u/wt/i1", Command: []string{"agent", "-p"}, Mounts: []Mount{
				{Kind: MountWritable, Src: "/home/u/wt/i1", Dest: "/home/u/wt/i1"},
				{Kind: MountTmpfs, Dest: "/home/u"},
				{Kind: MountFile, FD: 3, Dest: "/home/u/.claude.json"},
				{Kind: MountReadOnly, Src: "/usr", Dest: "/usr"},
				{Kind: MountSymlink, Src: "usr/bin", Dest: "/bin"},
			}},
			want: "/usr/bin/bwrap --unshare-all --die-with-parent --cap-drop ALL --symlink usr/bin /bin " +
				"--tmpfs /home/u --perms 0600 --file 3 /home/u/.claude.json --bind /home/u/wt/i1 /home/u/wt/i1 " +
				"--ro-bind /usr /usr --remount-ro / --chdir /home/u/wt/i1 -- agent -p",
		},
		{
			name: "a legacy worktree: the clone's git dir writable, its hooks, config and other worktrees not",
			spec: Spec{Bwrap: "bwrap", Command: []string{"sh"}, Mounts: []Mount{
				{Kind: MountWritable, Src: "/r/.git/worktrees/i1", Dest: "/r/.git/worktrees/i1"},
				{Kind: MountReadOnly, Src: "/r/.git/worktrees", Dest: "/r/.git/worktrees"},
				{Kind: MountReadOnly, Src: "/r/.git/hooks", Dest: "/r/.git/hooks"},
				{Kind: MountWritable, Src: "/r/.git", Dest: "/r/.git"},
				{Kind: MountReadOnly, Src: "/r/.git/config", Dest: "/r/.git/config"},
			}},
			want: "bwrap --unshare-all --die-with-parent --cap-drop ALL --bind /r/.git /r/.git --ro-bind /r/.git/config /r/.git/config " +
				"--ro-bind /r/.git/hooks /r/.git/hooks --ro-bind /r/.git/worktrees /r/.git/worktrees " +
				"--bind /r/.git/worktrees/i1 /r/.git/worktrees/i1 --remount-ro / -- sh",
		},
		{
			name: "the host's network, /proc, /dev, /tmp, secrets hidden, optional binds",
			spec: Spec{Bwrap: "bwrap", ShareNet: true, Command: []string{"make", "test"}, Mounts: []Mount{
				{Kind: MountHidden, Dest: "/etc/shadow"},
				{Kind: MountTmpfs, Dest: "/tmp"},
				{Kind: MountDev, Dest: "/dev"},
				{Kind: MountProc, Dest: "/proc"},
				{Kind: MountReadOnly, Src: "/etc", Dest: "/etc"},
				{Kind: MountOptional, Src: "/run/x/prompt.md", Dest: "/run/x/prompt.md"},
			}},
			want: "bwrap --unshare-all --share-net --die-with-parent --cap-drop ALL --dev /dev --ro-bind /etc /etc " +
				"--ro-bind-try /dev/null /etc/shadow --proc /proc --ro-bind-try /run/x/prompt.md /run/x/prompt.md --tmpfs /tmp --remount-ro / -- make test",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(tc.spec.Args(), " "); got != tc.want {
				t.Errorf("Args:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestShimCommandLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		socket         string
		forward, argv  []string
		want           []string
		wantParsedFrom []string
	}{
		{"no network", "", []string{"127.0.0.1:9"}, []string{"sh", "-c", "--"},
			[]string{"/w", ShimCommand, "--", "sh", "-c", "--"}, nil},
		{"proxy and forwards", "/run/wave-sandbox/proxy.sock", []string{"127.0.0.1:9", "127.0.0.1:10"}, []string{"claude", "--socket"},
			[]string{"/w", ShimCommand, "--socket", "/run/wave-sandbox/proxy.sock", "--forward", "127.0.0.1:9", "--forward", "127.0.0.1:10", "--", "claude", "--socket"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := shimCommand("/w", tc.socket, tc.forward, tc.argv)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("shimCommand = %q, want %q", got, tc.want)
			}
			sa, err := parseShim(got[2:])
			if err != nil {
				t.Fatal(err)
			}
			if sa.socket != tc.socket || !slices.Equal(sa.argv, tc.argv) || (tc.socket != "" && !slices.Equal(sa.forward, tc.forward)) {
				t.Errorf("parsed back %+v", sa)
			}
		})
	}
	for _, bad := range [][]string{{}, {"--"}, {"--socket"}, {"--what", "x", "--", "sh"}} {
		if _, err := parseShim(bad); err == nil {
			t.Errorf("parseShim(%q) accepted", bad)
		}
	}
}

func TestProxyEnvRoutesEveryClientThroughTheProxy(t *testing.T) {
	t.Parallel()
	got := proxyEnv([]string{"PATH=/usr/bin", "no_proxy=*", "NO_PROXY=localhost", "https_proxy=http://corp:3128", "HOME=/h"}, "http://127.0.0.1:41")
	want := []string{"PATH=/usr/bin", "HOME=/h",
		"HTTP_PROXY=http://127.0.0.1:41", "http_proxy=http://127.0.0.1:41",
		"HTTPS_PROXY=http://127.0.0.1:41", "https_proxy=http://127.0.0.1:41",
		"ALL_PROXY=http://127.0.0.1:41", "all_proxy=http://127.0.0.1:41"}
	if !slices.Equal(got, want) {
		t.Errorf("proxyEnv:\n got %q\nwant %q", got, want)
	}
}

func TestInsideEnvGivesTheSandboxItsOwnTemporaryDirectoryAndTheAgentItsTerm(t *testing.T) {
	t.Parallel()
	got := insideEnv([]string{"TMPDIR=/var/folders/x", "HOME=/h", "TERM=xterm-256color"})
	if !slices.Equal(got, []string{"HOME=/h", termEnv + "=xterm-256color", "TMPDIR=/tmp", "TERM=dumb"}) {
		t.Errorf("insideEnv = %q", got)
	}
	if back := agentTerm(got); !slices.Equal(back, []string{"HOME=/h", "TMPDIR=/tmp", "TERM=xterm-256color"}) {
		t.Errorf("agentTerm = %q", back)
	}
	if back := agentTerm(insideEnv([]string{"HOME=/h"})); !slices.Equal(back, []string{"HOME=/h", "TMPDIR=/tmp"}) {
		t.Errorf("an agent without TERM got %q", back)
	}
}
