package dashboard

import (
	"strings"
	"testing"

	"github.com/wave-orchestrator/wave-orchestrator/state"
)

// checkFrame asserts the frame fills exactly w×h: no line wider, no
// scrolling of the alternate screen.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) != h {
		t.Errorf("frame is %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := visibleWidth(l); n > w {
			t.Errorf("line %d is %d columns, wider than %d: %q", i+1, n, w, l)
		}
	}
}

func TestModelGolden(t *testing.T) {
	tests := []struct {
		name string
		lane func(t *testing.T) state.Lane
		w, h int
		keys []string
	}{
		{"model-many-80x24", func(*testing.T) state.Lane { return manyLane() }, 80, 24, nil},
		{"model-many-selected-80x24", func(*testing.T) state.Lane { return manyLane() }, 80, 24, repeat("j", 27)},
		{"model-preview-80x24", laneWithLogs, 80, 24, []string{"j"}},
		{"model-preview-wide-180x30", laneWithLogs, 180, 30, []string{"j"}},
		{"model-zoom-80x24", laneWithLogs, 80, 24, []string{"j", "l"}},
		{"model-help-80x24", func(*testing.T) state.Lane { return manyLane() }, 80, 24, []string{"?"}},
		{"model-filter-80x24", func(*testing.T) state.Lane { return manyLane() }, 80, 24, []string{"/", "r", "u", "n"}},
		{"model-result-80x24", func(*testing.T) state.Lane { return failedLane() }, 80, 24, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := press(t, newTestModel(t, Config{}, tt.lane(t), tt.w, tt.h), tt.keys...)
			got := m.View()
			golden(t, tt.name, got+"\n")
			checkFrame(t, got, tt.w, tt.h)
		})
	}
}

func repeat(k string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = k
	}
	return out
}

// At 80×24 every running and failed agent stays on screen wherever the
// selection is; the sections and the preview shrink instead.
func TestModelFrameKeepsRunningAndFailedAgents(t *testing.T) {
	l := manyLane()
	m := newTestModel(t, Config{}, l, 80, 24)
	for i := range l.Waves[0].Agents {
		frame := m.View()
		checkFrame(t, frame, 80, 24)
		for _, a := range l.Waves[0].Agents {
			if urgent(a) && !agentLine(a.ID).MatchString(frame) {
				t.Fatalf("selection %d: %s (%s) is hidden:\n%s", i, a.ID, a.State, frame)
			}
		}
		if sel, _ := m.Selected(); !agentLine(sel.ID).MatchString(frame) {
			t.Fatalf("the selected %s is hidden:\n%s", sel.ID, frame)
		}
		m = press(t, m, "j")
	}
}

// The help overlay lists every enabled key binding of the view and the
// model, at 80×24.
func TestModelHelpListsEveryKey(t *testing.T) {
	m := newTestModel(t, Config{}, runningLane(), 80, 24)
	frame := press(t, m, "?").View()
	checkFrame(t, frame, 80, 24)
	groups := append(m.views[0].FullHelp(), m.keys.list())
	for _, g := range groups {
		for _, b := range g {
			if !b.Enabled() {
				continue
			}
			if h := b.Help(); !strings.Contains(frame, h.Key+" ") || !strings.Contains(frame, h.Desc) {
				t.Errorf("help lacks %q %q:\n%s", h.Key, h.Desc, frame)
			}
		}
	}
}
