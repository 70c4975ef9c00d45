package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/wave-orchestrator/wave-orchestrator/usage"
)

// The agents and run facts lines are most of the cache file, and
// encoding/json's reflection most of the time spent reading them. These
// read exactly the lines encodeCache writes, with encoding/json's own
// decoding of every string with an escape, every time and every usage; a
// line they do not follow goes to encoding/json whole (decodeLine).

// decodeLine decodes one cache file line into l.
func decodeLine(b []byte, l *cacheLine) error {
	var err error
	switch {
	case bytes.HasPrefix(b, []byte(`{"a":`)):
		s := scanner{b: b, i: len(`{"a":`)}
		if l.Agents, err = s.agents(); err == nil && s.end() {
			return nil
		}
	case bytes.HasPrefix(b, []byte(`{"r":`)):
		s := scanner{b: b, i: len(`{"r":`)}
		if l.Runs, err = s.runs(); err == nil && s.end() {
			return nil
		}
	case bytes.HasPrefix(b, []byte(`{"h":`)), bytes.HasPrefix(b, []byte(`{"w":`)), bytes.HasPrefix(b, []byte(`{"l":`)):
		if decodeNarrow(b, l) == nil {
			return nil
		}
	}
	*l = cacheLine{}
	return json.Unmarshal(b, l)
}

// narrowLine is a head, wave or logged runs line: encoding/json sets up
// its decoding for the types it meets, and cacheLine's agents and run
// facts (read by the scanner) would be most of that set-up.
type narrowLine struct {
	Head   *cacheHead  `json:"h"`
	Logged []LoggedRun `json:"l"`
	Wave   *Wave       `json:"w"`
}

// decodeNarrow decodes b as a narrowLine; an error for any key, in the
// line or below it, that narrowLine does not have, or anything after the
// object, and decodeLine then reads the line as a whole cacheLine.
func decodeNarrow(b []byte, l *cacheLine) error {
	var n narrowLine
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&n); err != nil {
		return err
	}
	if d.InputOffset() != int64(len(b)) {
		return errShape
	}
	*l = cacheLine{Head: n.Head, Logged: n.Logged, Wave: n.Wave}
	return nil
}

var errShape = errors.New("not the cache's own spelling")

// scanner reads compact JSON as encoding/json writes it.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) end() bool { return s.i == len(s.b)-1 && s.b[s.i] == '}' }

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// token is the next string literal, quotes included.
func (s *scanner) token() ([]byte, bool, error) {
	if !s.eat('"') {
		return nil, false, errShape
	}
	start, escaped := s.i-1, false
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i++
		case '"':
			s.i++
			return s.b[start:s.i], escaped, nil
		}
	}
	return nil, false, errShape
}

func (s *scanner) str() (string, error) {
	t, escaped, err := s.token()
	if err != nil {
		return "", err
	}
	if !escaped {
		return string(t[1 : len(t)-1]), nil
	}
	var out string
	err = json.Unmarshal(t, &out)
	return out, err
}

func (s *scanner) time() (*time.Time, error) {
	t, _, err := s.token()
	if err != nil {
		return nil, err
	}
	var out time.Time
	if err := out.UnmarshalJSON(t); err != nil {
		return nil, err
	}
	return &out, nil
}

func (s *scanner) int() (int64, error) {
	start := s.i
	for s.i < len(s.b) && (s.b[s.i] == '-' || s.b[s.i] >= '0' && s.b[s.i] <= '9') {
		s.i++
	}
	return strconv.ParseInt(string(s.b[start:s.i]), 10, 64)
}

// usage reads a usage object with encoding/json (rare, and nested).
func (s *scanner) usage() (*usage.Usage, error) {
	start, depth := s.i, 0
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '"':
			if _, _, err := s.token(); err != nil {
				return nil, err
			}
			s.i--
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				s.i++
				var u usage.Usage
				return &u, json.Unmarshal(s.b[start:s.i], &u)
			}
		}
	}
	return nil, errShape
}

// object calls field for each key of an object, the scanner at its value.
func (s *scanner) object(field func(key string) error) error {
	if !s.eat('{') {
		return errShape
	}
	for first := true; !s.eat('}'); first = false {
		if !first && !s.eat(',') {
			return errShape
		}
		k, err := s.str()
		if err != nil || !s.eat(':') {
			return errShape
		}
		if err := field(k); err != nil {
			return err
		}
	}
	return nil
}

// array calls item for each element of an array.
func (s *scanner) array(item func() error) error {
	if !s.eat('[') {
		return errShape
	}
	for first := true; !s.eat(']'); first = false {
		if !first && !s.eat(',') {
			return errShape
		}
		if err := item(); err != nil {
			return err
		}
	}
	return nil
}

func (s *scanner) agents() ([]cachedAgent, error) {
	out := []cachedAgent{}
	err := s.array(func() error {
		var a cachedAgent
		err := s.object(func(k string) error { return s.agentField(&a, k) })
		out = append(out, a)
		return err
	})
	return out, err
}

func (s *scanner) agentField(a *cachedAgent, k string) (err error) {
	if p := agentString(a, k); p != nil {
		*p, err = s.str()
		return err
	}
	var n int64
	switch k {
	case "at":
		n, err = s.int()
		a.Attempt = int(n)
	case "sa":
		a.StartedAt, err = s.time()
	case "fa":
		a.FinishedAt, err = s.time()
	case "ec":
		n, err = s.int()
		c := int(n)
		a.ExitCode = &c
	case "hb":
		n, err = s.int()
		a.HeartbeatAgeMs = &n
	case "oa":
		n, err = s.int()
		a.OutputAgeMs = &n
	case "us":
		a.Usage, err = s.usage()
	default:
		return errShape
	}
	return err
}

// agentString is the string field of a whose key is k, or nil.
func agentString(a *cachedAgent, k string) *string {
	switch k {
	case "id":
		return &a.ID
	case "ti":
		return &a.Title
	case "ro":
		return &a.Role
	case "ex":
		return &a.Executor
	case "st":
		return &a.State
	case "sg":
		return &a.Signal
	case "sn":
		return &a.SessionName
	case "be":
		return &a.Backend
	case "po":
		return &a.Pod
	case "rd":
		return &a.RunDir
	case "lp":
		return &a.LogPath
	case "lm":
		return &a.LastMarker
	case "sc":
		return &a.StatusCode
	case "de":
		return &a.Detail
	}
	return nil
}

func (s *scanner) runs() (map[string]CachedRun, error) {
	out := map[string]CachedRun{}
	err := s.object(func(dir string) error {
		var r CachedRun
		err := s.object(func(k string) error {
			switch k {
			case "f":
				return s.array(func() error {
					var fk FileKey
					t, err := s.str()
					if err == nil {
						err = fk.UnmarshalText([]byte(t))
					}
					r.Files = append(r.Files, fk)
					return err
				})
			case "r":
				return s.object(func(k string) error { return s.factField(&r.Facts, k) })
			}
			return errShape
		})
		out[dir] = r
		return err
	})
	return out, err
}

func (s *scanner) factField(f *RunFacts, k string) (err error) {
	if p := factString(f, k); p != nil {
		*p, err = s.str()
		return err
	}
	switch k {
	case "ec":
		var n int64
		n, err = s.int()
		c := int(n)
		f.ExitCode = &c
	case "sa":
		f.StartedAt, err = s.time()
	case "fa":
		f.FinishedAt, err = s.time()
	case "hb":
		f.LastHeartbeatAt, err = s.time()
	case "oa":
		f.LastOutputAt, err = s.time()
	case "lo":
		if !bytes.HasPrefix(s.b[s.i:], []byte("true")) {
			return errShape
		}
		s.i += len("true")
		f.Lost = true
	case "wa":
		return s.array(func() error {
			w, err := s.str()
			f.Warnings = append(f.Warnings, w)
			return err
		})
	case "us":
		f.Usage, err = s.usage()
	default:
		return errShape
	}
	return err
}

// factString is the string field of f whose key is k, or nil.
func factString(f *RunFacts, k string) *string {
	switch k {
	case "d":
		return &f.Disposition
	case "sg":
		return &f.Signal
	case "re":
		return &f.Reason
	case "lm":
		return &f.LastMarker
	case "er":
		return &f.Err
	case "be":
		return &f.Backend
	case "po":
		return &f.Pod
	case "ag":
		return &f.AgentID
	case "ex":
		return &f.Executor
	}
	return nil
}
