package gitops

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Every git call of a Repo runs under rules that nothing a worker can
// write changes (docs/security-model.md, "What the supervisor trusts"):
//
//   - core.hooksPath is an empty directory of ours
//     (<git-common-dir>/wave-orchestrator/hooks), given on the command
//     line, which wins over every file: no hook of the clone, of a
//     worker's checkout or of the user's configuration runs, not even
//     the post-checkout hook `git worktree add` or `git clone` would run.
//   - core.fsmonitor=false, likewise: no fsmonitor program runs.
//   - No system configuration, and as the global one a file of ours
//     (<git-common-dir>/wave-orchestrator/config) holding only the keys
//     of the user's system and global configuration that pushing and
//     committing need (copiedKey): identity, credential helpers, URL
//     rewrites, ssh, http proxies and certificates, safe.directory, and
//     Git LFS's filter.
//   - The GitHub token variables (and Options.Credentials) are in no
//     call's environment but the fetches, pushes and ls-remotes of the
//     remote, where a credential helper of the user's may read them;
//     Options.Secrets are in none.

// secretEnv are the variables git calls never see unless they reach the
// remote: GitHub tokens a credential helper (gh's) may read.
var secretEnv = []string{"GITHUB_TOKEN", "GH_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// homeDir is where a clone keeps what its git calls are given: the empty
// hooks directory and the global configuration file.
const homeDir = "wave-orchestrator"

// home is a clone's homeDir.
type home struct {
	hooks  string // empty: core.hooksPath
	config string // GIT_CONFIG_GLOBAL
}

// hardConfig is the -c list every call of a Repo gets. maintenance.auto
// off spares a `git maintenance run --auto` after most commands (its
// pre-auto-gc hook would not run anyway): the user's own git keeps the
// clone tidy.
func hardConfig(hooks string) []string {
	return []string{"core.hooksPath=" + hooks, "core.fsmonitor=false", "maintenance.auto=false"}
}

// copiedKey reports whether a key of the user's system or global
// configuration goes into the configuration our calls read. key is as
// `git config --list` prints it: section and name in lower case, the
// subsection (between them) as written.
func copiedKey(key string) bool {
	section, rest, ok := strings.Cut(key, ".")
	if !ok {
		return false
	}
	sub, name := "", rest
	if i := strings.LastIndex(rest, "."); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	switch section {
	case "user":
		return sub == "" && (name == "name" || name == "email")
	case "credential":
		return name == "helper" || name == "username" || name == "usehttppath"
	case "url":
		return sub != "" && (name == "insteadof" || name == "pushinsteadof")
	case "core":
		return sub == "" && name == "sshcommand"
	case "http":
		return true // proxies, certificates, cookies: nothing in http.* runs a program
	case "safe":
		return sub == "" && name == "directory"
	case "filter":
		return sub == "lfs"
	}
	return false
}

// configEntry is one key and value of a configuration listing.
type configEntry struct{ key, value string }

// parseConfigList reads `git config --list -z --show-scope` output and
// keeps the copied keys of the system and global scopes, in order (a
// later value of a multi-valued key adds to the earlier ones, an empty
// credential.helper clears them: order is meaning).
func parseConfigList(out string) []configEntry {
	var kept []configEntry
	f := strings.Split(out, "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		scope, kv := f[i], f[i+1]
		key, value, _ := strings.Cut(kv, "\n")
		if (scope == "system" || scope == "global") && copiedKey(key) {
			kept = append(kept, configEntry{key, value})
		}
	}
	return kept
}

// formatConfig writes entries as a configuration file git reads back to
// the same keys and values: one section header per entry, every value
// and subsection quoted and escaped.
func formatConfig(entries []configEntry) []byte {
	var b bytes.Buffer
	b.WriteString("# Written by wave-orchestrator: the keys of your system and global git\n# configuration its own git calls use (docs/security-model.md). Rewritten at every start.\n")
	b.Write(formatEntries(entries))
	return b.Bytes()
}

// formatEntries is entries as configuration file text (formatConfig):
// one section header for each run of entries of one section.
func formatEntries(entries []configEntry) []byte {
	var b bytes.Buffer
	last := ""
	for _, e := range entries {
		section, rest, _ := strings.Cut(e.key, ".")
		sub, name := "", rest
		if i := strings.LastIndex(rest, "."); i >= 0 {
			sub, name = rest[:i], rest[i+1:]
		}
		header := "[" + section + "]\n"
		if sub != "" {
			header = "[" + section + " " + quoteConfig(sub, false) + "]\n"
		}
		if header != last {
			b.WriteString(header)
			last = header
		}
		fmt.Fprintf(&b, "\t%s = %s\n", name, quoteConfig(e.value, true))
	}
	return b.Bytes()
}

// quoteConfig is s in double quotes, escaped as git's config parser
// reads it (a subsection knows only \" and \\).
func quoteConfig(s string, value bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case value && r == '\n':
			b.WriteString(`\n`)
		case value && r == '\t':
			b.WriteString(`\t`)
		case r == '\n' || r == 0:
			// Not expressible in a subsection; git never lists one.
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// bootstrapRunner is the runner of calls made before a clone's home
// exists (and of repo-less calls): no system or global configuration,
// hooks looked for under /dev/null (where no file can be), no fsmonitor,
// no secrets; safe.directory entries of the user's are given on the
// command line (the one place besides the protected files git honours
// them).
func bootstrapRunner(extra, secrets []string, entries []configEntry, timeout time.Duration) runner {
	env, _ := cleanEnv(append([]string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}, extra...), secrets)
	rn := runner{env: env, config: hardConfig(os.DevNull), timeout: timeout}
	for _, e := range entries {
		if e.key == "safe.directory" {
			rn.config = append(rn.config, "safe.directory="+e.value)
		}
	}
	return rn
}

// userConfig lists the copied keys of the user's system and global
// configuration as git reads them from dir (includes resolved, an
// includeIf of a gitdir the repository matches too). Only reading:
// `git config --list` runs no hook or program.
func userConfig(ctx context.Context, dir string, secrets []string, timeout time.Duration) ([]configEntry, error) {
	env, _ := cleanEnv(configFilesEnv(), secrets)
	rn := runner{env: env, config: hardConfig(os.DevNull), timeout: timeout}
	out, err := rn.run(ctx, call{dir: dir, args: []string{"config", "--list", "-z", "--includes", "--show-scope"}})
	if err != nil {
		return nil, fmt.Errorf("read your git configuration: %w", err)
	}
	return parseConfigList(out), nil
}

// configFilesEnv is where the environment says the user's configuration
// files are (GIT_CONFIG_GLOBAL, …): theirs to say when their own
// configuration is read, as a worker's git reads it.
func configFilesEnv() []string {
	var files []string
	for _, k := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"} {
		if v, ok := os.LookupEnv(k); ok {
			files = append(files, k+"="+v)
		}
	}
	return files
}

// makeHome makes the clone's home under its common git directory: the
// empty hooks directory (anything found in it is removed: nothing of
// ours is ever there) and the configuration file, rewritten only when
// its content changes.
func makeHome(common string, entries []configEntry) (home, error) {
	h := home{hooks: filepath.Join(common, homeDir, "hooks"), config: filepath.Join(common, homeDir, "config")}
	if err := os.MkdirAll(h.hooks, 0o700); err != nil {
		return h, fmt.Errorf("git home: %w", err)
	}
	if names, err := os.ReadDir(h.hooks); err == nil && len(names) > 0 {
		for _, n := range names {
			if err := os.RemoveAll(filepath.Join(h.hooks, n.Name())); err != nil {
				return h, fmt.Errorf("git home: empty %s: %w", h.hooks, err)
			}
		}
	}
	want := formatConfig(entries)
	if have, err := os.ReadFile(h.config); err == nil && bytes.Equal(have, want) {
		return h, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return h, fmt.Errorf("git home: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(h.config), "config-*")
	if err != nil {
		return h, fmt.Errorf("git home: %w", err)
	}
	_, werr := tmp.Write(want)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return h, fmt.Errorf("git home: %w", err)
	}
	if err := os.Rename(tmp.Name(), h.config); err != nil {
		os.Remove(tmp.Name())
		return h, fmt.Errorf("git home: %w", err)
	}
	return h, nil
}

// secretNames are the variables held back from git calls: the GitHub
// token ones and the options' credentials and secrets.
func secretNames(o Options) []string {
	return append(append(append([]string(nil), secretEnv...), o.Credentials...), o.Secrets...)
}

// credentials keeps of held (KEY=VALUE) the credentials a call to the
// remote is handed: the GitHub token ones and o.Credentials (also when
// o.Secrets names them too); the rest of o.Secrets never.
func credentials(held []string, o Options) []string {
	var out []string
	for _, kv := range held {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(secretEnv, k) || slices.Contains(o.Credentials, k) {
			out = append(out, kv)
		}
	}
	return out
}

// homeRunner is the runner of a Repo whose home is h.
func homeRunner(h home, extra, secrets []string, timeout time.Duration) runner {
	env, held := cleanEnv(append([]string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + h.config}, extra...), secrets)
	return runner{env: env, secrets: held, config: hardConfig(h.hooks), timeout: timeout}
}

// reachesRemote: the call talks to the remote named remote (and may
// need a credential for it).
func reachesRemote(args []string, remote string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "fetch", "push", "ls-remote":
		for _, a := range args[1:] {
			if a == remote {
				return true
			}
		}
	}
	return false
}
