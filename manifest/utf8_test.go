package manifest

import (
	"encoding/hex"
	"testing"
)

// Expected values come from Node: Buffer.from(s.toString("utf8")).
func TestDecodeUTF8MatchesNode(t *testing.T) {
	cases := map[string]string{
		"e282":       "efbfbd",
		"e28241":     "efbfbd41",
		"ff":         "efbfbd",
		"c0af":       "efbfbdefbfbd",
		"eda080":     "efbfbdefbfbdefbfbd",
		"f4908080":   "efbfbdefbfbdefbfbdefbfbd",
		"f09f98":     "efbfbd",
		"f09f9880":   "f09f9880",
		"80":         "efbfbd",
		"e0a0":       "efbfbd",
		"c2":         "efbfbd",
		"614262ff63": "614262efbfbd63",
	}
	for in, want := range cases {
		b, _ := hex.DecodeString(in)
		if got := hex.EncodeToString(decodeUTF8(b)); got != want {
			t.Errorf("decodeUTF8(%s) = %s, want %s", in, got, want)
		}
	}
}
