package backlog

import "strings"

// AskedQuestion is what a needs-input issue asks: the last line that asks
// (holds a '?' outside a URL) of the newest comment that asks, else the
// last such line of the body, else the title. The text is carried as
// data, only trimmed; escaping it for a terminal is the printer's job.
func AskedQuestion(is Issue) string {
	for i := len(is.Comments) - 1; i >= 0; i-- {
		if q, ok := askingLine(is.Comments[i].Body); ok {
			return q
		}
	}
	if q, ok := askingLine(is.Body); ok {
		return q
	}
	return strings.TrimSpace(is.Title)
}

// askingLine returns the last line of text that asks, without markdown
// quote, bullet or heading markers.
func askingLine(text string) (string, bool) {
	lines := strings.Split(text, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if !asks(l) {
			continue
		}
		for _, p := range []string{">", "#", "- ", "* "} {
			for strings.HasPrefix(l, p) {
				l = strings.TrimSpace(strings.TrimPrefix(l, p))
			}
		}
		return l, true
	}
	return "", false
}

// asks reports whether a line holds a '?' that is not part of a URL
// ("see https://x/?page=2" asks nothing).
func asks(line string) bool {
	for _, w := range strings.Fields(line) {
		if strings.Contains(w, "://") && !strings.HasSuffix(w, "?") {
			continue
		}
		if strings.Contains(w, "?") {
			return true
		}
	}
	return false
}
