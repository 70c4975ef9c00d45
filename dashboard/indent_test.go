package dashboard

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// randomValue builds a JSON value with the shapes and strings that could
// trip an indenter: empty and nested containers, and strings holding
// quotes, backslashes, braces, commas, colons, controls and non-ASCII.
func randomValue(r *rand.Rand, depth int) any {
	pieces := []string{`"`, `\`, `\"`, `{`, `}`, `[`, `]`, `,`, `:`, " ", "\n", "\t", "\x00", "é", "\u2028", "<&>", "a", "\\u0041"}
	str := func() string {
		var b strings.Builder
		for range r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	k := r.IntN(7)
	if depth <= 0 && k >= 5 {
		k = r.IntN(5)
	}
	switch k {
	case 0:
		return str()
	case 1:
		return r.Float64()*1e6 - 5e5
	case 2:
		return r.IntN(2) == 0
	case 3:
		return nil
	case 4:
		return r.IntN(1000)
	case 5:
		a := []any{}
		for range r.IntN(4) {
			a = append(a, randomValue(r, depth-1))
		}
		return a
	default:
		m := map[string]any{}
		for range r.IntN(4) {
			m[str()] = randomValue(r, depth-1)
		}
		return m
	}
}

func TestIndentCompactIsByteForByteJSONIndent(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		v := randomValue(r, 4)
		compact, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact, "", "  "); err != nil {
			t.Fatal(err)
		}
		if got := indentCompact(nil, compact, "  "); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("value %d (%s):\ngot  %q\nwant %q", i, compact, got, want.Bytes())
		}
	}
}

// The status document a script reads is what the encoder printed before:
// the same bytes for every lane shape the dashboard tests use.
func TestStatusJSONBytesAreTheEncodersIndentedOutput(t *testing.T) {
	for name, l := range map[string]state.Lane{"running": runningLane(), "closure": closureLane(), "failed": failedLane(), "big": bigLane(200)} {
		for _, wave := range []int{-1, 0, 1} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetIndent("", "  ")
			if err := enc.Encode(StatusJSON(l, wave)); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteStatusJSON(&got, l, wave); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s wave %d: WriteStatusJSON differs from the indenting encoder", name, wave)
			}
		}
	}
}

func BenchmarkStatusJSONIndent(b *testing.B) {
	l := bigLane(200)
	for _, how := range []string{"encoder", "indentCompact"} {
		b.Run(how, func(b *testing.B) {
			for b.Loop() {
				var buf bytes.Buffer
				if how == "encoder" {
					enc := json.NewEncoder(&buf)
					enc.SetIndent("", "  ")
					_ = enc.Encode(StatusJSON(l, -1))
				} else {
					_ = WriteStatusJSON(&buf, l, -1)
				}
			}
		})
	}
}

// The indentWriter's pieces may cut a string, an escape or a container
// anywhere: written in pieces of every size, the bytes are indentCompact's.
func TestIndentWriterIsIndentCompactWhereverThePiecesAreCut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 500 {
		compact, err := json.Marshal(randomValue(r, 4))
		if err != nil {
			t.Fatal(err)
		}
		want := indentCompact(nil, compact, "  ")
		for _, piece := range []int{1, 2, 3, 7, len(compact)} {
			var got bytes.Buffer
			in := indenter{indent: "  "}
			for off := 0; off < len(compact); off += piece {
				got.Write(in.append(nil, compact[off:min(off+piece, len(compact))]))
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("value %d in pieces of %d (%s):\ngot  %q\nwant %q", i, piece, compact, got.Bytes(), want)
			}
		}
	}
}
