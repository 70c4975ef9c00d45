package manifest

import "unicode/utf8"

// decodeUTF8 returns b as the WHATWG UTF-8 decoder (Node's
// readFileSync(p, "utf8")) would re-encode it: each maximal invalid
// subpart becomes one U+FFFD. Valid input is returned unchanged.
func decodeUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for i := 0; i < len(b); {
		n := maximalSubpart(b[i:])
		if n > 0 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		i += -n
	}
	return out
}

// maximalSubpart returns the length of the valid sequence at the start of
// b, or minus the length of the invalid subpart to replace (at least 1).
func maximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c < 0x80:
		return 1
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c >= 0xE0 && c <= 0xEF:
		need = 2
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c >= 0xF0 && c <= 0xF4:
		need = 3
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		return -1
	}
	for k := 1; k <= need; k++ {
		if k >= len(b) || b[k] < lo || b[k] > hi {
			return -k
		}
		lo, hi = 0x80, 0xBF
	}
	return need + 1
}
