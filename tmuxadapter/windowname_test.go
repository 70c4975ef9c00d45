package tmuxadapter

import "testing"

// A window name is shown in tmux's status line: an agent title cannot
// run a command through a format, end the tmux command, or put a control,
// bidi or invisible character in front of the user.
func TestWindowNameNeverCarriesAFormatOrAnInvisibleCharacter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"A1 builds", "A1 builds"},
		{"#(rm -rf ~)", "##(rm -rf ~)"},
		{"end;", `end\;`},
		{"red\x1b[31m\x07", "red[31m"},
		{"csi\u009b2J", "csi2J"},
		{"exe\u202etxt.sh", "exetxt.sh"},
		{"ad\u200bmin\u2066", "admin"},
		{"👩‍💻 codes", "👩‍💻 codes"},
	} {
		if got := windowName(tc.in); got != tc.want {
			t.Errorf("windowName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
