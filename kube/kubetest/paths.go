package kubetest

import (
	"os"
	"sort"
	"strings"
	"syscall"
)

// pathMap emulates a container's mount namespace: container paths that
// live somewhere else on this machine, longest first so a mount inside
// another mount wins. Identity entries (hostPath and PVC mounts at their
// own path) are kept so they shadow a shorter mapped mount around them.
type pathMap []pathMapping

type pathMapping struct{ container, local string }

func (m *pathMap) add(container, local string) {
	container = cleanAbs(container)
	for _, e := range *m {
		if e.container == container {
			return // the first mount of a path wins, as the runtime refuses duplicates
		}
	}
	*m = append(*m, pathMapping{container: container, local: local})
	sort.SliceStable(*m, func(i, j int) bool { return len((*m)[i].container) > len((*m)[j].container) })
}

// rewrite maps s when it is a mapped container path or lies under one
// ("path" or "path/..."); anything else comes back unchanged.
func (m pathMap) rewrite(s string) string {
	for _, e := range m {
		if s == e.container {
			return e.local
		}
		if e.container == "/" {
			continue // mapping the root would rewrite every absolute path
		}
		if strings.HasPrefix(s, e.container+"/") {
			return e.local + s[len(e.container):]
		}
	}
	return s
}

func cleanAbs(p string) string {
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
	}
	return p
}

// expand replaces $(NAME) in s with NAME's value where lookup knows it,
// the way Kubernetes expands command, args and env values: $$ is a
// literal $, an unknown or unterminated reference stays as written.
func expand(s string, lookup func(string) (string, bool)) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// envList is a container's environment in definition order; a later
// definition of a name replaces the earlier value in place.
type envList struct {
	names  []string
	values map[string]string
}

func (e *envList) set(name, value string) {
	if e.values == nil {
		e.values = map[string]string{}
	}
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

func (e *envList) lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

// environ renders the list as NAME=value strings for exec.
func (e *envList) environ() []string {
	out := make([]string, 0, len(e.names))
	for _, n := range e.names {
		out = append(out, n+"="+e.values[n])
	}
	return out
}

// exitCode is what a container runtime reports for a finished process:
// its exit status, or 128+n for one killed by signal n.
func exitCode(state *os.ProcessState) int32 {
	if state == nil {
		return 128 + int32(syscall.SIGKILL)
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int32(ws.Signal())
	}
	return int32(state.ExitCode())
}
