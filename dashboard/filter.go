package dashboard

import (
	"cmp"
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
)

// filterInput is the / prompt: a one-line query edited at its end. (The
// bubbles textinput would bring a clipboard module that execs xclip.)
type filterInput struct {
	value []rune
	limit int // runes kept; 0 is maxFilter
}

// maxFilter bounds the query; longer text is no use in a match.
const maxFilter = 64

func (f filterInput) Value() string { return string(f.value) }

func (f filterInput) SetValue(s string) filterInput {
	f.value = []rune(s)
	return f
}

// edit applies a key: printable runes append, backspace deletes one,
// ctrl+w a word, ctrl+u everything.
func (f filterInput) edit(k tea.KeyMsg) filterInput {
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		for _, r := range k.Runes {
			if unicode.IsPrint(r) && len(f.value) < cmp.Or(f.limit, maxFilter) {
				f.value = append(f.value, r)
			}
		}
	case tea.KeyBackspace:
		if len(f.value) > 0 {
			f.value = f.value[:len(f.value)-1]
		}
	case tea.KeyCtrlW:
		s := strings.TrimRightFunc(string(f.value), unicode.IsSpace)
		i := strings.LastIndexFunc(s, unicode.IsSpace)
		f.value = []rune(s[:i+1])
	case tea.KeyCtrlU:
		f.value = nil
	}
	return f
}

// view is the prompt as typed, with a block for the cursor while editing.
func (f filterInput) view(editing bool) string {
	s := "/" + clean(string(f.value))
	if editing {
		s += "█"
	}
	return s
}
