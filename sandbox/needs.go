package sandbox

import (
	"path/filepath"
	"slices"
)

// HomeFile is one file an agent CLI reads from its user's home (its
// credentials, its settings): under the directory $Env names when that
// variable is set (the directory is then made private, like HOME), else
// at Else under HOME. The sandbox gets a private, writable copy; what
// the agent writes to it is lost with the sandbox.
type HomeFile struct {
	Env  string `json:"env,omitempty"`
	Path string `json:"path"`
	Else string `json:"else"`
}

// Needs is what one agent CLI needs in a sandbox, declared per executor
// (package executor): the files of its home, and where its model
// endpoint is — the variables holding its URL (ANTHROPIC_BASE_URL), else
// its default hosts — which the proxy always lets through.
type Needs struct {
	Home        []HomeFile `json:"home,omitempty"`
	EndpointEnv []string   `json:"endpointEnv,omitempty"`
	Endpoints   []string   `json:"endpoints,omitempty"`
}

// homeFile is a resolved HomeFile: the file to copy and, when an
// environment variable placed it, the directory to make private.
type homeFile struct {
	path    string
	private string
}

// resolveHome places each HomeFile by env (the agent's environment) and
// home (its HOME; "" when it has none).
func resolveHome(files []HomeFile, env func(string) string, home string) []homeFile {
	var out []homeFile
	for _, f := range files {
		if f.Env != "" {
			if dir := env(f.Env); filepath.IsAbs(dir) {
				out = append(out, homeFile{path: filepath.Join(dir, f.Path), private: filepath.Clean(dir)})
				continue
			}
		}
		if home != "" && f.Else != "" {
			out = append(out, homeFile{path: filepath.Join(home, f.Else)})
		}
	}
	return out
}

// endpoints is the model endpoints n allows under env: the URL of every
// endpoint variable that is set, else n's default hosts.
func (n Needs) endpoints(env func(string) string) []string {
	var out []string
	for _, k := range n.EndpointEnv {
		if v := env(k); v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		out = slices.Clone(n.Endpoints)
	}
	return out
}
