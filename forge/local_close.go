package forge

import (
	"bytes"
	"fmt"

	"gopkg.in/yaml.v3"
)

// CloseInFrontMatter is an issue file's content with `state: closed` in
// its front matter: the state line rewritten, or one added before the
// closing "---". The rest of the file is kept byte for byte, so the
// change a wave branch carries is that one line. changed is false when
// the file already says closed. A file the local source cannot read is
// an error naming the line, and nothing is changed.
func CloseInFrontMatter(data []byte) (out []byte, changed bool, err error) {
	f, err := parseIssueFile(data)
	if err != nil {
		return nil, false, err
	}
	if f.State == "closed" {
		return data, false, nil
	}
	bom := bytes.HasPrefix(data, []byte("\ufeff"))
	body := bytes.TrimPrefix(data, []byte("\ufeff"))
	lines := bytes.SplitAfter(body, []byte("\n"))
	eol := []byte("\n")
	if bytes.HasSuffix(lines[0], []byte("\r\n")) {
		eol = []byte("\r\n")
	}
	stateLine, end := stateKeyLine(data), -1
	for i := 1; i < len(lines); i++ {
		if isFence(bytes.TrimRight(lines[i], "\r\n")) {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, false, fmt.Errorf("front matter is never closed")
	}
	var b bytes.Buffer
	if bom {
		b.WriteString("\ufeff")
	}
	for i, l := range lines {
		switch {
		case i == stateLine:
			b.WriteString("state: closed")
			b.Write(eol)
			continue
		case i == end && stateLine < 0:
			b.WriteString("state: closed")
			b.Write(eol)
		}
		b.Write(l)
	}
	return b.Bytes(), true, nil
}

// stateKeyLine is the 0-based file line of the front matter's state key,
// -1 when it has none. The front matter starts on the file's second line.
func stateKeyLine(data []byte) int {
	front, _, err := splitFrontMatter(data)
	if err != nil {
		return -1
	}
	var doc yaml.Node
	if yaml.Unmarshal(front, &doc) != nil || len(doc.Content) == 0 {
		return -1
	}
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k, v := root.Content[i], root.Content[i+1]; k.Value == "state" && k.Line == v.Line && k.Column == 1 {
			return k.Line // YAML line n is the file's line n+1, 0-based n
		}
	}
	return -1
}

// IssueFileNumber is the issue number a local issue file's name gives
// ("12-fix-the-parser.md" → 12), false for any other name.
func IssueFileNumber(name string) (int, bool) { return issueNumber(name) }
