package config

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/wave-orchestrator/wave-orchestrator/internal/suggest"
)

// referenceOnly lists keys a reference wave.config.json may carry that this
// port accepts and ignores: they configure reference features we do not
// have (planner, skills, telemetry, monorepo projects, VS Code terminals).
// "*" matches one path segment. Accepting them lets a real reference repo's
// config load; any other unknown key is an error.
var referenceOnly = []string{
	"defaultProject", "planner", "waveControl", "externalProviders",
	"capabilityRouting", "projects",
	"paths.orchestratorStateDir", "paths.terminalsPath",
	"validation.bootstrapPassConditions", "validation.testCommand",
	"validation.testCommandTimeout", "validation.autoClosure.allowAutoDocProjection",
	"executors.profiles.*.claude.strictMcpConfig",
	"lanes.*.capabilityRouting", "lanes.*.waveControl",
	"lanes.*.externalProviders", "lanes.*.terminalsPath",
	"lanes.*.orchestratorStateDir",
}

// runtimeRoles are the roles agents run as (executor role defaults, skills).
var runtimeRoles = []string{"design", "implementation", "integration", "documentation", "cont-qa",
	"cont-eval", "security", "infra", "deploy", "research"}

// fixedKeyMaps are the maps whose keys come from a fixed set, by path
// (lane sections follow the top-level paths). Keys compare trimmed and
// case-insensitively, as the reference reads them; any other key is an
// unknown key, at whatever depth. runtimeMixTargets keys are executor ids
// too but are checked with their values (validate.go).
var fixedKeyMaps = map[string][]string{
	"runtimePolicy.defaultExecutorByRole": runtimeRoles,
	"defaultExecutorByRole":               runtimeRoles, // lanes.<x>.defaultExecutorByRole
	"skills.byRole":                       runtimeRoles,
	"skills.byRuntime":                    {"codex", "claude", "opencode", "local"},
}

// fixedKeys returns the allowed keys of the map at path, if it has a
// fixed set.
func fixedKeys(path string) ([]string, bool) {
	if keys, ok := fixedKeyMaps[path]; ok {
		return keys, true
	}
	if rest, ok := strings.CutPrefix(path, "lanes."); ok {
		if _, sub, ok := strings.Cut(rest, "."); ok {
			keys, ok := fixedKeyMaps[sub]
			return keys, ok
		}
	}
	return nil, false
}

// checkMapKey reports a key outside its map's fixed set; the reference's
// renamed role "evaluator" gets its rename hint.
func (c *checker) checkMapKey(k *yaml.Node, path, kp string) bool {
	keys, fixed := fixedKeys(path)
	if !fixed {
		return true
	}
	key := strings.ToLower(strings.TrimSpace(k.Value))
	switch {
	case slices.Contains(keys, key):
		return true
	case key == "evaluator" && slices.Contains(keys, "cont-qa"):
		c.fail(k, kp, "renamed to %s.cont-qa", path)
	default:
		c.fail(k, kp, "unknown key%s; want one of %s", suggest.Hint(key, keys), strings.Join(keys, ", "))
	}
	return false
}

// renamedKeys are keys the reference itself rejects with a rename hint.
var renamedKeys = map[string]string{
	"roles.evaluatorAgentId":        "roles.contQaAgentId",
	"roles.evaluatorRolePromptPath": "roles.contQaRolePromptPath",
}

// misplacedKeys are keys of one section that exist in another, with the
// key meant: a wave-mode cap under backlog.budget, or a backlog cap under
// runtime.budget, is named with where it belongs.
var misplacedKeys = map[string]string{
	"runtime.budget.perIssue": "backlog.budget.perIssue",
	"runtime.budget.run":      "backlog.budget.run",
	"backlog.budget.wave":     "runtime.budget.wave",
	"backlog.budget.lane":     "runtime.budget.lane",
}

// csvKeys are list keys whose scalar form is a comma-separated list, as
// in the reference (a scalar elsewhere is a one-element list).
var csvKeys = map[string]bool{"fallbacks": true, "fallbackExecutorOrder": true}

// maxNodes bounds the walk so alias-heavy YAML cannot explode it.
const maxNodes = 200000

func matchPattern(pattern, path string) bool {
	p, k := strings.Split(pattern, "."), strings.Split(path, ".")
	if len(p) != len(k) {
		return false
	}
	for i := range p {
		if p[i] != "*" && p[i] != k[i] {
			return false
		}
	}
	return true
}

// isReferenceOnly reports whether path is an accepted-and-ignored key. A
// lane's sections (lanes.<x>.validation...) follow the top-level rules.
func isReferenceOnly(path string) bool {
	for _, p := range referenceOnly {
		if matchPattern(p, path) {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(path, "lanes."); ok {
		if _, sub, ok := strings.Cut(rest, "."); ok && strings.Contains(sub, ".") {
			return isReferenceOnly(sub)
		}
	}
	return false
}

// checker walks a YAML tree against a Go type, using the types' json tag
// names as keys. It reports unknown keys and wrongly shaped values with
// their line, records each key's line, and normalises scalars in place
// (e.g. a string where a list is expected) so the tree then decodes.
type checker struct {
	file   string
	lines  map[string]int
	errs   []error
	nodes  int
	tooBig bool // toValue hit maxNodes
}

func (c *checker) fail(n *yaml.Node, key, format string, args ...any) {
	c.errs = append(c.errs, &Error{File: c.file, Line: n.Line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

// fieldsByName maps json key names to struct fields, flattening embedded
// structs without a name of their own, as encoding/json does.
func fieldsByName(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			for k, v := range fieldsByName(f.Type) {
				out[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func (c *checker) walk(n *yaml.Node, t reflect.Type, path string) {
	if c.nodes++; c.nodes > maxNodes {
		if c.nodes == maxNodes+1 {
			c.fail(n, path, "document too large (more than %d nodes after alias expansion)", maxNodes)
		}
		return
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		c.walk(n.Alias, t, path)
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isNull(n) || t.Kind() == reflect.Interface {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		c.walkStruct(n, t, path)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			c.fail(n, path, "want a mapping")
			return
		}
		seen := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			kp := join(path, k.Value)
			if c.duplicate(k, kp, seen) {
				continue
			}
			c.lines[kp] = k.Line
			if c.checkMapKey(k, path, kp) {
				c.walk(v, t.Elem(), kp)
			}
		}
	case reflect.Slice:
		c.walkSlice(n, t, path)
	default:
		c.walkScalar(n, t.Kind(), path)
	}
}

func (c *checker) walkStruct(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, path, "want a mapping")
		return
	}
	fields := fieldsByName(t)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kp := join(path, k.Value)
		if c.duplicate(k, kp, seen) {
			continue
		}
		c.lines[kp] = k.Line
		if f, ok := fields[k.Value]; ok {
			c.walk(v, f.Type, kp)
			continue
		}
		switch {
		case renamedKeys[kp] != "":
			c.fail(k, kp, "renamed to %s", renamedKeys[kp])
		case misplacedKeys[kp] != "":
			c.fail(k, kp, "unknown key here: this section takes %s; did you mean %s?",
				strings.Join(slices.Sorted(maps.Keys(fields)), ", "), misplacedKeys[kp])
		case isReferenceOnly(kp):
			// A reference feature we do not port; accepted, ignored.
		default:
			c.fail(k, kp, "unknown key%s", suggest.Hint(k.Value, slices.Sorted(maps.Keys(fields))))
		}
	}
}

// duplicate reports a key its mapping already holds (seen: key → line),
// naming both lines. YAML parsers keep the last and JSON.parse does too,
// so a key set twice would change a setting with no word about the other.
func (c *checker) duplicate(k *yaml.Node, kp string, seen map[string]int) bool {
	if first, dup := seen[k.Value]; dup {
		c.fail(k, kp, "duplicate key: also set at %s:%d; keep one", c.file, first)
		return true
	}
	seen[k.Value] = k.Line
	return false
}

// argvKeys are commands given as argv lists: a string there would be run
// as one program name ("make test"), never split by a shell, so it is an
// error rather than a one-element list.
var argvKeys = map[string]bool{"backlog.verify": true, "backlog.setup": true, "backlog.probe.argv": true,
	"backlog.claim.check": true, "backlog.claim.command": true}

func (c *checker) walkSlice(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.ScalarNode && argvKeys[path] && !isNull(n) {
		c.fail(n, path, "want a command as a list of words, e.g. [make, test], got %q", n.Value)
		return
	}
	if n.Kind == yaml.ScalarNode && t.Elem().Kind() == reflect.String {
		items := []string{n.Value}
		if csvKeys[path[strings.LastIndex(path, ".")+1:]] {
			items = splitCSV(n.Value)
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: n.Line, Column: n.Column}
		for _, it := range items {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: it, Line: n.Line})
		}
		*n = *seq
		return
	}
	if n.Kind != yaml.SequenceNode {
		c.fail(n, path, "want a list")
		return
	}
	for i, e := range n.Content {
		c.walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
	}
}

func (c *checker) walkScalar(n *yaml.Node, kind reflect.Kind, path string) {
	if n.Kind != yaml.ScalarNode {
		c.fail(n, path, "want a single value, not a %s", kindName(n.Kind))
		return
	}
	switch kind {
	case reflect.String:
		n.Tag = "!!str"
	case reflect.Int, reflect.Int64:
		if _, err := strconv.ParseInt(strings.TrimSpace(n.Value), 10, 64); err != nil {
			c.fail(n, path, "want an integer, got %q", n.Value)
			return
		}
		n.Tag, n.Value = "!!int", strings.TrimSpace(n.Value)
	case reflect.Bool:
		b, ok := parseBool(n.Value)
		if !ok {
			c.fail(n, path, "want true or false, got %q", n.Value)
			return
		}
		n.Tag, n.Value = "!!bool", strconv.FormatBool(b)
	}
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	}
	return "value"
}

// parseBool accepts the spellings the reference accepts.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "yes", "on":
		return true, true
	case "false", "0", "no", "off":
		return false, true
	}
	return false, false
}

func splitCSV(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// toValue converts a checked YAML tree into plain values that
// encoding/json can marshal (string-keyed maps, finite numbers).
func (c *checker) toValue(n *yaml.Node) any {
	if c.nodes++; c.nodes > maxNodes {
		c.tooBig = true
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return c.toValue(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil
		}
		return c.toValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = c.toValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			s = append(s, c.toValue(e))
		}
		return s
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		b, _ := parseBool(n.Value)
		return b
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f
		}
	}
	return n.Value
}
