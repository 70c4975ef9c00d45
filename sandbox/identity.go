package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// gitIdentity is the user's commit identity ([user] name and email) from
// their global git config, which stays outside the sandbox: it may hold
// credential helpers, URL rewrites carrying tokens, or programs git
// runs. The sandbox's private HOME gets a .gitconfig with the identity
// only, so a commit inside carries the same author as before.
func gitIdentity(env func(string) string, home string) (name, email string) {
	var files []string
	if x := env("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		files = append(files, filepath.Join(x, "git", "config"))
	} else if home != "" {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	// Later files win, as git reads ~/.gitconfig after the XDG one.
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		n, e := parseIdentity(f)
		f.Close()
		if n != "" {
			name = n
		}
		if e != "" {
			email = e
		}
	}
	return name, email
}

// parseIdentity reads user.name and user.email from a git config file's
// [user] sections (the last value wins; includes are not followed).
func parseIdentity(r io.Reader) (name, email string) {
	sc := bufio.NewScanner(r)
	inUser := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			sect, _, _ := strings.Cut(strings.Trim(line, "[]"), " ")
			inUser = strings.EqualFold(strings.TrimSpace(sect), "user")
			continue
		}
		if !inUser {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if u, err := strconv.Unquote(v); err == nil {
			v = u
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "name":
			name = v
		case "email":
			email = v
		}
	}
	return name, email
}

// identityConfig is the private HOME's .gitconfig: the identity only.
func identityConfig(name, email string) string {
	if name == "" && email == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("[user]\n")
	if name != "" {
		fmt.Fprintf(&b, "\tname = %s\n", gitQuote(name))
	}
	if email != "" {
		fmt.Fprintf(&b, "\temail = %s\n", gitQuote(email))
	}
	return b.String()
}

// gitQuote is v as a git config value: in double quotes, with backslash
// and double quote escaped and line breaks dropped.
func gitQuote(v string) string {
	v = strings.NewReplacer("\\", "\\\\", `"`, `\"`, "\n", " ", "\r", " ").Replace(v)
	return `"` + v + `"`
}
