package dashboard

// indentCompact appends src, compact JSON as json.Marshal writes it (no
// whitespace outside strings), to dst indented as json.Indent(dst, src,
// "", indent) would, byte for byte: an empty object or array stays "{}"
// or "[]", a colon gains one space, each element starts a line. It exists
// because json.Indent runs its full scanner over every byte, which was a
// sixth of `status --json` on a 200-run lane; compact input needs only to
// know where strings are.
func indentCompact(dst, src []byte, indent string) []byte {
	depth := 0
	open := false // the last byte was '{' or '[': a newline is owed unless it closes at once
	newline := func() {
		dst = append(dst, '\n')
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			newline()
		}
		switch c {
		case '"':
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				j = len(src) - 1
			}
			dst = append(dst, src[i:j+1]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			depth++
			open = true
		case '}', ']':
			depth--
			if open {
				open = false
			} else {
				newline()
			}
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
