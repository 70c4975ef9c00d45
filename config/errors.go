package config

import (
	"fmt"
	"strings"
)

// Error is one configuration problem: the key it concerns and where that
// key came from (file and line, the environment variable or the flag that
// set it).
type Error struct {
	File string // config file path; "" for defaults or env
	Line int    // 1-based; 0 when unknown
	Env  string // WAVE_* variable that set the key, if any
	Flag string // flag that set the key (--timeout-minutes), if any
	Key  string // dotted key path, e.g. executors.claude.outputFormat
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Flag != "":
		fmt.Fprintf(&b, "flag %s: ", e.Flag)
	case e.Env != "":
		fmt.Fprintf(&b, "env %s: ", e.Env)
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// sources remembers where keys were set so that errors found after
// decoding (value validation, lane merging) can point at them.
type sources struct {
	file  string
	lines map[string]int    // dotted key → line in file
	env   map[string]string // dotted key → WAVE_* variable
	flag  map[string]string // dotted key → --flag
}

func (s *sources) set(m *map[string]string, key, origin string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[key] = origin
}

// errorf builds an Error for key, trying each candidate key in turn for
// a known origin (a lane's own key first, then the top-level one). A flag
// or variable that set any candidate wins: it masked the lane's key
// (maskLanes), though the file line of that key is still recorded.
func (s sources) errorf(keys []string, format string, args ...any) *Error {
	e := &Error{File: s.file, Key: keys[0], Msg: fmt.Sprintf(format, args...)}
	for _, k := range keys {
		if v, ok := s.flag[k]; ok {
			e.Flag, e.Key = v, k
			return e
		}
		if v, ok := s.env[k]; ok {
			e.Env, e.Key = v, k
			return e
		}
	}
	for _, k := range keys {
		if l, ok := s.lines[k]; ok {
			e.Line, e.Key = l, k
			return e
		}
	}
	return e
}
