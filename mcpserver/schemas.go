package mcpserver

import (
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// schemaFor is the input schema of T as the SDK infers it (field
// descriptions from the jsonschema tags, no unknown fields), with
// optional numbers plain integers rather than "integer or null", the
// enumerations listed and the bounds stated, so the model sees every
// allowed value before it calls.
func schemaFor[T any](enums map[string][]string, bounds map[string][2]float64) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema of %T: %v", *new(T), err))
	}
	for name, p := range s.Properties {
		if i := slices.Index(p.Types, "null"); i >= 0 && len(p.Types) == 2 {
			p.Type, p.Types = p.Types[1-i], nil
		}
		if vs, ok := enums[name]; ok {
			for _, v := range vs {
				p.Enum = append(p.Enum, v)
			}
		}
		if b, ok := bounds[name]; ok {
			p.Minimum, p.Maximum = &b[0], &b[1]
		}
	}
	for name := range enums {
		mustHave(s, name)
	}
	for name := range bounds {
		mustHave(s, name)
	}
	return s
}

func mustHave(s *jsonschema.Schema, name string) {
	if _, ok := s.Properties[name]; !ok {
		panic("mcpserver: schema has no property " + name)
	}
}

// nonNegative bounds a wave number or count: 0 and up (the upper bound
// only keeps the schema finite).
var nonNegative = [2]float64{0, 1 << 31}
