package dashboard

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
)

// PreviewLines is how much of an agent's log the preview holds.
const PreviewLines = 500

// preview is the selected agent's output: the tail of its agent.log,
// escape sequences stripped, in a scrollable viewport that follows the
// tail until the user scrolls up.
type preview struct {
	agent, path string
	none        string // what the body says when nothing is selected
	lines       []string
	err         error
	loaded      bool
	follow      bool
	vp          viewport.Model
}

type logMsg struct {
	agent, path string
	lines       []string
	err         error
}

func newPreview() preview {
	vp := viewport.New(0, 0)
	vp.KeyMap = viewport.KeyMap{} // the list maps the keys
	return preview{follow: true, vp: vp}
}

// forLog points the preview at the log at path of who (an agent id, an
// issue's "#n"), following its tail.
func (p preview) forLog(who, path string) preview {
	if who == p.agent && path == p.path {
		return p
	}
	p.agent, p.path, p.lines, p.err, p.loaded, p.follow = who, path, nil, nil, false, true
	p.vp.SetContent("")
	p.vp.GotoTop()
	return p
}

// readLog reads the tail of the log in a command, off the UI loop.
func readLog(agent, path string) tea.Cmd {
	return func() tea.Msg {
		lines, err := LogTail(path, PreviewLines)
		return logMsg{agent: agent, path: path, lines: lines, err: err}
	}
}

// receive takes a log read; one for another agent (the selection moved
// on) is dropped.
func (p preview) receive(m logMsg) preview {
	if m.agent != p.agent || m.path != p.path {
		return p
	}
	p.lines, p.err, p.loaded = m.lines, m.err, true
	p.vp.SetContent(strings.Join(p.lines, "\n"))
	if p.follow {
		p.vp.GotoBottom()
	}
	return p
}

// resize fits the viewport to w×h, keeping the tail in view when
// following.
func (p preview) resize(w, h int) preview {
	p.vp.Width, p.vp.Height = max(1, w), max(1, h)
	if p.follow {
		p.vp.GotoBottom()
	} else {
		p.vp.SetYOffset(p.vp.YOffset)
	}
	return p
}

// scroll moves the viewport for a scroll action; scrolling to the end
// follows the tail again.
func (p preview) scroll(act action) preview {
	switch act {
	case actPageUp:
		p.vp.PageUp()
	case actPageDown:
		p.vp.PageDown()
	case actHalfUp:
		p.vp.HalfPageUp()
	case actHalfDown:
		p.vp.HalfPageDown()
	case actTop:
		p.vp.GotoTop()
	case actBottom:
		p.vp.GotoBottom()
	default:
		return p
	}
	p.follow = p.vp.AtBottom()
	return p
}

// title is the preview's first line: whose output, and where in it.
func (p preview) title(width int, pal palette) string {
	where := "following"
	if !p.follow {
		where = fmt.Sprintf("lines %d-%d of %d · G follows", p.vp.YOffset+1,
			min(p.vp.YOffset+p.vp.Height, len(p.lines)), len(p.lines))
	}
	name := orDash(clean(p.agent))
	s := fmt.Sprintf("── %s output · %s ", name, where)
	return fit(pal.dim.Render(s+strings.Repeat("─", max(0, width-ansiWidth(s)))), width)
}

// body is the viewport, or why there is nothing to show.
func (p preview) body(h int) string {
	var msg string
	switch {
	case p.agent == "":
		msg = p.none
	case p.path == "":
		msg = p.agent + " has not started; no output yet"
	case errors.Is(p.err, fs.ErrNotExist):
		msg = "(no output yet)"
	case p.err != nil:
		msg = clean(p.err.Error())
	case !p.loaded:
		msg = "reading " + clean(p.path) + " …"
	case len(p.lines) == 0:
		msg = "(no output yet)"
	}
	if msg != "" {
		return fitLines(fit(msg, p.vp.Width), p.vp.Width, h)
	}
	return p.vp.View()
}
