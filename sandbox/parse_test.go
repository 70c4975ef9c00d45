package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseGitFile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"gitdir: /r/.git/worktrees/i1\n", "/r/.git/worktrees/i1", true},
		{"gitdir:../.git/worktrees/x", "../.git/worktrees/x", true},
		{"gitdir: \n", "", false},
		{"ref: refs/heads/main\n", "", false},
	} {
		got, ok := parseGitFile(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseGitFile(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseAlternates(t *testing.T) {
	t.Parallel()
	in := "# borrowed\n/home/u/repo/.git/objects\n../../other/objects\n\"/with \\\"quote\\\"/objects\"\n\n"
	got := parseAlternates(strings.NewReader(in), "/w/i1/.git/objects")
	want := []string{"/home/u/repo/.git/objects", "/w/i1/other/objects", `/with "quote"/objects`}
	if !slices.Equal(got, want) {
		t.Errorf("parseAlternates = %q, want %q", got, want)
	}
}

func TestParseIdentityTakesTheUserSectionOnly(t *testing.T) {
	t.Parallel()
	in := `[core]
	name = not-this
[user]
	name = "Ada Lovelace"
	email = ada@example.com
[credential "https://github.com"]
	helper = store
[url "https://TOKEN@github.com/"]
	insteadOf = https://github.com/
`
	name, email := parseIdentity(strings.NewReader(in))
	if name != "Ada Lovelace" || email != "ada@example.com" {
		t.Fatalf("parseIdentity = %q, %q", name, email)
	}
	cfg := identityConfig(name, `a"b\c@example.com`)
	if want := "[user]\n\tname = \"Ada Lovelace\"\n\temail = \"a\\\"b\\\\c@example.com\"\n"; cfg != want {
		t.Errorf("identityConfig = %q, want %q", cfg, want)
	}
	if identityConfig("", "") != "" {
		t.Error("an empty identity writes a config")
	}
}

func TestHomeFilesAreFoundWhereTheCLIWouldLook(t *testing.T) {
	t.Parallel()
	files := []HomeFile{
		{Env: "CLAUDE_CONFIG_DIR", Path: ".credentials.json", Else: ".claude/.credentials.json"},
		{Env: "CLAUDE_CONFIG_DIR", Path: ".claude.json", Else: ".claude.json"},
		{Path: "x", Else: ".xrc"},
	}
	got := resolveHome(files, envLookup([]string{"CLAUDE_CONFIG_DIR=/cfg/claude"}), "/home/u")
	want := []homeFile{{"/cfg/claude/.credentials.json", "/cfg/claude"}, {"/cfg/claude/.claude.json", "/cfg/claude"}, {"/home/u/.xrc", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("with CLAUDE_CONFIG_DIR: %+v, want %+v", got, want)
	}
	got = resolveHome(files, envLookup([]string{"CLAUDE_CONFIG_DIR=relative"}), "/home/u")
	want = []homeFile{{"/home/u/.claude/.credentials.json", ""}, {"/home/u/.claude.json", ""}, {"/home/u/.xrc", ""}}
	if !slices.Equal(got, want) {
		t.Errorf("without: %+v, want %+v", got, want)
	}
	if got := resolveHome(files, envLookup(nil), ""); len(got) != 0 {
		t.Errorf("no HOME: %+v", got)
	}
}

func TestExecutableMountsBindTheAgentsInstallNotItsDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	nm := filepath.Join(dir, "cli", "node_modules")
	real := filepath.Join(nm, "@vendor", "cli", "bin", "cli.exe")
	bin := filepath.Join(nm, ".bin")
	for _, d := range []string{filepath.Dir(real), bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@vendor/cli/bin/cli.exe", filepath.Join(bin, "cli")); err != nil {
		t.Fatal(err)
	}
	lone := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(lone, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv0, path string
		want        []Mount
	}{
		{"cli", "relative:" + bin, []Mount{{Kind: MountOptional, Src: filepath.Join(bin, "cli"), Dest: filepath.Join(bin, "cli")}, {Kind: MountReadOnly, Src: nm, Dest: nm}}},
		{lone, "", []Mount{{Kind: MountOptional, Src: lone, Dest: lone}}},
		{"sh", "/usr/bin:/bin", nil},
		{"missing-cli", bin, nil},
	} {
		if got := executableMounts(tc.argv0, tc.path, dir); !slices.Equal(got, tc.want) {
			t.Errorf("executableMounts(%q, %q) = %+v, want %+v", tc.argv0, tc.path, got, tc.want)
		}
	}
}
