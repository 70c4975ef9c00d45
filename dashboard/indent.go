package dashboard

import "io"

// indentCompact appends src, compact JSON as json.Marshal writes it (no
// whitespace outside strings), to dst indented as json.Indent(dst, src,
// "", indent) would, byte for byte: an empty object or array stays "{}"
// or "[]", a colon gains one space, each element starts a line. It exists
// because json.Indent runs its full scanner over every byte, which was a
// sixth of `status --json` on a 200-run lane; compact input needs only to
// know where strings are.
func indentCompact(dst, src []byte, indent string) []byte {
	in := indenter{indent: indent}
	return in.append(dst, src)
}

// indenter is indentCompact over a document given in pieces cut
// anywhere, even inside a string or an escape: what it has read so far is
// its state.
type indenter struct {
	indent   string
	depth    int
	open     bool // the last byte was '{' or '[': a newline is owed unless it closes at once
	inString bool
	escaped  bool // inside a string, right after a backslash
}

func (in *indenter) newline(dst []byte) []byte {
	dst = append(dst, '\n')
	for range in.depth {
		dst = append(dst, in.indent...)
	}
	return dst
}

// append appends the next piece of the document, src, indented, to dst.
func (in *indenter) append(dst, src []byte) []byte {
	for i := 0; i < len(src); i++ {
		if in.inString {
			end := in.stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
			continue
		}
		c := src[i]
		if in.open && c != '}' && c != ']' {
			in.open = false
			dst = in.newline(dst)
		}
		switch c {
		case '"':
			dst = append(dst, c)
			in.inString = true
		case '{', '[':
			dst = append(dst, c)
			in.depth++
			in.open = true
		case '}', ']':
			in.depth--
			if in.open {
				in.open = false
			} else {
				dst = in.newline(dst)
			}
			dst = append(dst, c)
		case ',':
			dst = in.newline(append(dst, c))
		case ':':
			dst = append(dst, c, ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd is the end of the run of string bytes from i: just after the
// closing quote, or src's end when the string goes on in the next piece.
// It moves the state past the bytes of the run.
func (in *indenter) stringEnd(src []byte, i int) int {
	for j := i; j < len(src); j++ {
		switch {
		case in.escaped:
			in.escaped = false
		case src[j] == '\\':
			in.escaped = true
		case src[j] == '"':
			in.inString = false
			return j + 1
		}
	}
	return len(src)
}

// indentWriter writes the compact JSON written to it to w indented, a
// bounded piece at a time: `status --json` on a lane of 200 runs is some
// 160 KB, which indented into one buffer was a third of the page faults
// of its output.
type indentWriter struct {
	w   io.Writer
	in  indenter
	buf []byte
}

const indentPiece = 16 << 10

func (iw *indentWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += indentPiece {
		iw.buf = iw.in.append(iw.buf[:0], p[off:min(off+indentPiece, len(p))])
		if _, err := iw.w.Write(iw.buf); err != nil {
			return off, err
		}
	}
	return len(p), nil
}
