package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"

	"gopkg.in/yaml.v3"
)

// Load reads <repoRoot>/wave.config.yaml (or .yml), else a reference
// <repoRoot>/wave.config.json, else uses Default(); then applies the WAVE_*
// variables env reports (nil: none; see envVars for the names) and the
// flags the user set among those bound, with precedence flag > env > file
// > default, also over lane sections (see layers.go); fills defaults,
// validates every value and resolves every configured lane. All problems
// are returned at once, joined; each is an *Error.
func Load(repoRoot string, env func(string) (string, bool), flags ...Flag) (*Config, error) {
	cfg := Default()
	v, err := cfg.readFile(repoRoot)
	if err != nil {
		return nil, err
	}
	if err := cfg.override(v, env, flags); err != nil {
		return nil, err
	}
	cfg.normalize()
	if err := cfg.maskLanes(); err != nil {
		return nil, err
	}
	errs := cfg.validate()
	names := []string{cfg.DefaultLane}
	for name := range cfg.Lanes {
		if name != cfg.DefaultLane {
			names = append(names, name)
		}
	}
	sort.Strings(names[1:])
	// Lanes inheriting a bad top-level value report it once each; keep
	// the first.
	seen := map[string]bool{}
	for _, name := range names {
		_, err := cfg.Lane(repoRoot, name)
		for _, e := range unjoin(err) {
			if !seen[e.Error()] {
				seen[e.Error()] = true
				errs = append(errs, e)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg, nil
}

// decode checks data against the Config schema and decodes it over cfg,
// so keys the file leaves out keep cfg's (default) values. JSON is parsed
// as YAML, which it is, to share one checker and get line numbers.
func decode(data []byte, path string, cfg *Config) error {
	isJSON := filepath.Ext(path) == ".json"
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		if !isJSON {
			return &Error{File: path, Msg: fmt.Sprintf("not valid YAML: %v", err)}
		}
		// Valid JSON that YAML rejects (tab indentation): check it
		// without line numbers.
		var v any
		if jerr := json.Unmarshal(data, &v); jerr != nil {
			return &Error{File: path, Msg: fmt.Sprintf("not valid JSON: %v", jerr)}
		}
		root = yaml.Node{}
		if err := root.Encode(v); err != nil {
			return &Error{File: path, Msg: fmt.Sprintf("not valid JSON: %v", err)}
		}
	}
	c := &checker{file: path, lines: map[string]int{}}
	cfg.File, cfg.src = path, sources{file: path, lines: c.lines}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || doc.Kind == yaml.DocumentNode {
		return nil // empty file or only comments: all defaults
	}
	c.walk(doc, reflect.TypeFor[Config](), "")
	if len(c.errs) > 0 {
		return errors.Join(c.errs...)
	}
	c.nodes = 0
	v := c.toValue(doc)
	if c.tooBig {
		return &Error{File: path, Msg: fmt.Sprintf("document too large (more than %d nodes after alias expansion)", maxNodes)}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return &Error{File: path, Msg: fmt.Sprintf("decode: %v", err)}
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return &Error{File: path, Msg: fmt.Sprintf("decode: %v", err)}
	}
	if isJSON {
		cfg.dropReferenceStateRoot()
	}
	return nil
}

// dropReferenceStateRoot discards a reference file's stateRoot (".tmp"):
// the reference's state tree has a different layout, and sharing its
// directory would mix the two tools' locks and records. Our state lives
// under .wave/ unless a wave.config.yaml says otherwise.
func (c *Config) dropReferenceStateRoot() {
	c.Paths.StateRoot = defaultStateRoot
	for name, lc := range c.Lanes {
		lc.StateRoot = ""
		if lc.Paths != nil {
			lc.Paths.StateRoot = ""
		}
		c.Lanes[name] = lc
	}
}

// UnmarshalJSON decodes a lane section and keeps its raw bytes, so that
// merging can replay exactly the keys the file set.
func (lc *LaneConfig) UnmarshalJSON(b []byte) error {
	type plain LaneConfig
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*lc = LaneConfig(p)
	if string(b) != "null" {
		lc.raw = append([]byte(nil), b...)
	}
	return nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}
