package main

import (
	goruntime "runtime"
	"runtime/debug"
	"testing"
)

// Release ldflags override what the toolchain recorded; a binary without
// a record still says what it is.
func TestVersionLdflagsOverrideTheToolchainRecord(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	for _, tc := range []struct {
		name              string
		bi                *debug.BuildInfo
		ver, commit, date string
		wantVer, wantRev  string
		wantTime          string
		wantModified      bool
	}{
		{"toolchain record", vcs, "", "", "", "(devel)", "0123456789abcdef", "2026-01-02T03:04:05Z", true},
		{"release ldflags", vcs, "v9.8.7", "abc123", "2030-01-02T03:04:05Z", "v9.8.7", "abc123", "2030-01-02T03:04:05Z", false},
		{"go install of a tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "", "", "", "v1.2.3", "", "", false},
		{"no record", nil, "", "", "", "(devel)", "", "", false},
	} {
		b := mergeBuildInfo(tc.bi, tc.ver, tc.commit, tc.date)
		if b.Version != tc.wantVer || b.Revision != tc.wantRev || b.Time != tc.wantTime || b.Modified != tc.wantModified || b.GoVersion != goruntime.Version() {
			t.Errorf("%s: %+v", tc.name, b)
		}
	}
}
