package dashboard

import (
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// testRow is a row of the list's own tests: an id and a state word.
type testRow struct{ id, state string }

func testRows(states ...string) []testRow {
	out := make([]testRow, len(states))
	for i, s := range states {
		out[i] = testRow{id: fmt.Sprintf("r%d", i+1), state: s}
	}
	return out
}

func testSpec(first func([]testRow) int) rowSpec[testRow] {
	return rowSpec[testRow]{
		words:  listWords{noun: "row", fields: "id, state", attach: "its session"},
		id:     func(r testRow) string { return r.id },
		log:    func(r testRow) string { return "/logs/" + r.id },
		text:   func(r testRow) string { return r.id + " " + r.state },
		urgent: func(r testRow) bool { return r.state == "run" },
		first:  first,
	}
}

// newTestList is a list of rows with the enter action, its preview 5
// lines high showing 40 lines of the selected row's log.
func newTestList(rows []testRow) list[testRow] {
	l := newList(testSpec(nil), "", actAttach).setRows(rows)
	l, _ = l.follow(false)
	l.out = l.out.resize(60, 5)
	if who, path := l.selectedLog(); path != "" {
		lines := make([]string, 40)
		for i := range lines {
			lines[i] = fmt.Sprintf("%s line %d", who, i+1)
		}
		l, _ = l.update(Config{}, "test", logMsg{agent: who, path: path, lines: lines})
	}
	return l
}

// pressList feeds keys to l as the view would and returns the last
// action the list handed back.
func pressList(l list[testRow], keys ...string) (list[testRow], action, string) {
	var act action
	note := ""
	for _, k := range keys {
		var cmd tea.Cmd
		l, act, cmd = l.key(Config{}, keyMsg(k))
		note = ""
		if cmd != nil {
			if n, ok := cmd().(NoteMsg); ok {
				note = string(n)
			}
		}
	}
	return l, act, note
}

func TestListKeys(t *testing.T) {
	many := testRows("done", "run", "done", "run", "done")
	tests := []struct {
		name      string
		rows      []testRow
		keys      []string
		sel       string // the selected row's id, "" none
		act       action // the action handed to the view by the last key
		note      string // the note the last key asked for, "" none
		follow    bool   // the preview follows its log's tail
		filter    string // the filter's text
		filtering bool   // the prompt is open
	}{
		{"empty: up and down select nothing", nil, []string{"j", "k", "down", "up"}, "", actNone, "", true, "", false},
		{"empty: page, home and end are harmless", nil, []string{"pgup", "pgdown", "home", "end"}, "", actNone, "", true, "", false},
		{"empty: enter says nothing is selected", nil, []string{"enter"}, "", actNone, "no row selected", true, "", false},
		{"empty: the filter opens and types", nil, []string{"/", "x"}, "", actNone, "", true, "x", true},
		{"one: down stays on it", testRows("run"), []string{"j", "down"}, "r1", actNone, "", true, "", false},
		{"one: up stays on it", testRows("run"), []string{"k", "up"}, "r1", actNone, "", true, "", false},
		{"one: enter is the view's", testRows("run"), []string{"enter"}, "r1", actAttach, "", true, "", false},
		{"one: pgup leaves the tail, end follows it", testRows("run"), []string{"pgup", "end"}, "r1", actNone, "", true, "", false},
		{"one: home shows the oldest line", testRows("run"), []string{"home"}, "r1", actNone, "", false, "", false},
		{"one: a filter that hides it", testRows("run"), []string{"/", "z", "enter"}, "", actNone, "", true, "z", false},
		{"many: down moves and stops at the end", many, []string{"j", "j", "down", "j", "j", "j"}, "r5", actNone, "", true, "", false},
		{"many: up stops at the start", many, []string{"j", "k", "k", "up"}, "r1", actNone, "", true, "", false},
		{"many: page keys scroll the output, not the selection", many, []string{"j", "pgup", "pgup"}, "r2", actNone, "", false, "", false},
		{"many: ctrl+u and ctrl+d too", many, []string{"ctrl+u", "ctrl+d"}, "r1", actNone, "", true, "", false},
		{"many: g and G are home and end", many, []string{"g", "G"}, "r1", actNone, "", true, "", false},
		{"many: the filter keeps the selection when it matches", many, []string{"j", "j", "j", "/", "r", "u", "n"}, "r4", actNone, "", true, "run", true},
		{"many: the filter moves it to the nearest match", many, []string{"j", "j", "/", "r", "u", "n", "enter"}, "r4", actNone, "", true, "run", false},
		{"many: j is text in the prompt, arrows select", many, []string{"/", "j", "backspace", "down"}, "r2", actNone, "", true, "", true},
		{"many: esc in the prompt clears the filter", many, []string{"/", "r", "u", "n", "down", "esc"}, "r4", actNone, "", true, "", false},
		{"many: esc after the prompt clears the filter", many, []string{"/", "d", "o", "enter", "esc"}, "r1", actNone, "", true, "", false},
		{"many: esc leaves full screen before the filter", many, []string{"/", "d", "enter", "l", "esc"}, "r1", actNone, "", true, "d", false},
		{"many: l zooms the output", many, []string{"j", "l"}, "r2", actNone, "", true, "", false},
		{"many: a key of no one's does nothing", many, []string{"x", "r", "["}, "r1", actNone, "", true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, act, note := pressList(newTestList(tt.rows), tt.keys...)
			if got := l.selectedID(); got != tt.sel {
				t.Errorf("selected %q, want %q", got, tt.sel)
			}
			if act != tt.act || note != tt.note {
				t.Errorf("last key: action %d note %q, want %d %q", act, note, tt.act, tt.note)
			}
			if l.out.follow != tt.follow {
				t.Errorf("preview follows %v, want %v", l.out.follow, tt.follow)
			}
			if zoom := tt.keys[len(tt.keys)-1] == "l"; l.zoom != zoom {
				t.Errorf("zoom %v, want %v", l.zoom, zoom)
			}
			if l.filter.Value() != tt.filter || l.filtering != tt.filtering || l.capturing() != tt.filtering {
				t.Errorf("filter %q open %v, want %q %v", l.filter.Value(), l.filtering, tt.filter, tt.filtering)
			}
		})
	}
}

// A refresh that reorders or drops rows keeps the selection on its row,
// or on the nearest row once it is gone; before the user chose a row
// the view's first one is selected.
func TestListSelectionSurvivesARefresh(t *testing.T) {
	l, _, _ := pressList(newTestList(testRows("done", "run", "done", "run", "done")), "j", "j")
	if l.selectedID() != "r3" {
		t.Fatalf("selected %q before the refresh", l.selectedID())
	}
	reordered := []testRow{{"r5", "done"}, {"r3", "run"}, {"r1", "done"}, {"r4", "run"}}
	if l = l.setRows(reordered); l.selectedID() != "r3" || l.sel != 1 {
		t.Fatalf("after reordering: %q at %d, want r3 at 1", l.selectedID(), l.sel)
	}
	if l = l.setRows([]testRow{{"r5", "done"}, {"r1", "done"}, {"r4", "run"}}); l.selectedID() != "r1" {
		t.Fatalf("r3 gone: %q selected, want r1 (the same row index)", l.selectedID())
	}
	if l = l.setRows(nil); l.selectedID() != "" {
		t.Fatalf("no rows: %q selected", l.selectedID())
	}

	firstRun := func(rows []testRow) int {
		for i, r := range rows {
			if r.state == "run" {
				return i
			}
		}
		return 0
	}
	l = newList(testSpec(firstRun), "").setRows(nil)
	if l = l.setRows(testRows("done", "done", "run")); l.selectedID() != "r3" {
		t.Fatalf("first read: %q selected, want the first running row r3", l.selectedID())
	}
	l = l.move(-1).setRows(testRows("run", "done", "run"))
	if l.selectedID() != "r2" {
		t.Fatalf("the user's choice r2 gave way to %q", l.selectedID())
	}
}

// The preview follows the selection, and a refresh reads the selected
// row's log again even when the selection stayed.
func TestListPreviewFollowsTheSelection(t *testing.T) {
	l := newTestList(testRows("run", "run"))
	l, _, _ = pressList(l, "j")
	l, cmd := l.follow(false)
	if l.out.agent != "r2" || cmd == nil {
		t.Fatalf("preview of %q after j (read %v)", l.out.agent, cmd != nil)
	}
	if _, cmd = l.follow(false); cmd != nil {
		t.Fatal("the log was read again with nothing changed")
	}
	if _, cmd = l.setRows(testRows("run", "run")).follow(true); cmd == nil {
		t.Fatal("a refresh did not read the log again")
	}
	if msg, ok := cmd().(logMsg); !ok || msg.agent != "r2" || msg.path != "/logs/r2" {
		t.Fatalf("read %#v", cmd())
	}
}

// The help is the key table: each view's keys once, the list's in both,
// a view's own only in it, the same key with the same words.
func TestListHelpIsTheKeyTable(t *testing.T) {
	waves, issues := newList(agentRows(), "", actAttach, actStop, actRetry, actPrevWave, actNextWave), newList(issueRows(), "", actAttach)
	seen := map[string]string{}
	for _, l := range [][][]string{helpOf(waves.fullHelp()), helpOf(issues.fullHelp())} {
		for _, col := range l {
			for _, kd := range col {
				k, d, _ := strings.Cut(kd, "\t")
				d = strings.NewReplacer("agent", "ROW", "issue", "ROW", "#, title, state, branch", "FIELDS",
					"id, title, state, role", "FIELDS", "its tmux session", "TARGET", "the worker's tmux session", "TARGET").Replace(d)
				if prev, ok := seen[k]; ok && prev != d {
					t.Errorf("%s means %q in one view and %q in the other", k, prev, d)
				}
				seen[k] = d
			}
		}
	}
	if got := strings.Join(helpOf(issues.fullHelp())[0], " "); strings.Contains(got, "stop") || !strings.Contains(got, "filter issues") {
		t.Errorf("backlog help: %s", got)
	}
}

// helpOf is the help's columns as "key\tdescription".
func helpOf(groups [][]key.Binding) [][]string {
	out := make([][]string, len(groups))
	for i, g := range groups {
		for _, b := range g {
			out[i] = append(out[i], b.Help().Key+"\t"+b.Help().Desc)
		}
	}
	return out
}
