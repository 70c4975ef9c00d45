package retry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestOverrideCheckNamesWhatIsWrong(t *testing.T) {
	agents := []string{"A1", "A0"}
	for _, tc := range []struct {
		o    Override
		want string
	}{
		{Override{}, "--resume-phase"},
		{Override{ResumePhase: "polish"}, `unknown phase "polish"`},
		{Override{SelectedAgentIDs: []string{"A1", "B2"}}, `no agent "B2"`},
		{Override{ResumePhase: "integrating"}, ""},
		{Override{SelectedAgentIDs: []string{"A0"}}, ""},
	} {
		err := tc.o.Check(agents)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
	if !errors.Is(Override{}.Check(agents), ErrOverrideEmpty) {
		t.Error("an empty override is not ErrOverrideEmpty")
	}
}

// A corrupt override is reported with its path and the way out, and a
// newer override than the one a run took is not consumed by that run.
func TestOverrideFileRoundTripCorruptAndConsume(t *testing.T) {
	path := OverridePath(t.TempDir())
	if o, err := ReadOverride(path); o != nil || err != nil {
		t.Fatalf("no file: %v %v", o, err)
	}
	taken := Override{SchemaVersion: 1, Kind: OverrideKind, Wave: 2, ResumePhase: "integrating", CreatedAt: time.Unix(100, 0).UTC()}
	if err := WriteOverride(path, taken); err != nil {
		t.Fatal(err)
	}
	newer := taken
	newer.CreatedAt = time.Unix(200, 0).UTC()
	if err := WriteOverride(path, newer); err != nil {
		t.Fatal(err)
	}
	if err := ConsumeOverride(path, taken); err != nil {
		t.Fatal(err)
	}
	if o, _ := ReadOverride(path); o == nil || !o.CreatedAt.Equal(newer.CreatedAt) {
		t.Fatalf("a newer override was consumed by the run of an older one: %+v", o)
	}
	if err := ConsumeOverride(path, newer); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("consumed override still there: %v", err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadOverride(path)
	if err == nil || !strings.Contains(err.Error(), filepath.Base(path)) || !strings.Contains(err.Error(), "retry clear") {
		t.Fatalf("corrupt override: %v", err)
	}
}
