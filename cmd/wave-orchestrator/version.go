package main

import (
	"encoding/json"
	"fmt"
	"io"
	goruntime "runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Release builds may stamp these with -ldflags "-X main.version=v1.2.3
// -X main.commit=<sha> -X main.date=<RFC 3339>" (goreleaser does); they
// override what the Go toolchain recorded in the binary, which is the
// source otherwise (`go install …@v1.2.3` records the module version, a
// build in a git checkout the revision, its time and whether the tree was
// modified).
var (
	version string
	commit  string
	date    string
)

// buildInfo is what `version` prints.
type buildInfo struct {
	Version   string `json:"version"`
	Revision  string `json:"revision,omitempty"`
	Time      string `json:"time,omitempty"`
	Modified  bool   `json:"modified"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// readBuildInfo merges the toolchain's record with the ldflags overrides.
func readBuildInfo() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return mergeBuildInfo(bi, version, commit, date)
}

// mergeBuildInfo is readBuildInfo without the process: the toolchain's
// record (nil when the binary has none) and the ldflags values, which win.
func mergeBuildInfo(bi *debug.BuildInfo, ldVersion, ldCommit, ldDate string) buildInfo {
	b := buildInfo{Version: "(devel)", GoVersion: goruntime.Version(), Platform: goruntime.GOOS + "/" + goruntime.GOARCH}
	if bi != nil {
		if v := bi.Main.Version; v != "" {
			b.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision = s.Value
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if ldVersion != "" {
		b.Version = ldVersion
	}
	if ldCommit != "" {
		b.Revision, b.Modified = ldCommit, false
	}
	if ldDate != "" {
		b.Time = ldDate
	}
	return b
}

// short is the one-line form: version, revision, Go.
func (b buildInfo) short() string {
	s := "wave-orchestrator " + b.Version
	if b.Revision != "" {
		rev := b.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if b.Modified {
			rev += "+modified"
		}
		s += " (" + rev + ")"
	}
	return s + " " + b.GoVersion + " " + b.Platform
}

func (b buildInfo) write(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	_, err := fmt.Fprintf(w, "%s\n  version   %s\n  revision  %s\n  modified  %v\n  built     %s\n  go        %s %s\n",
		b.short(), b.Version, orNone(b.Revision), b.Modified, orNone(b.Time), b.GoVersion, b.Platform)
	return err
}

func orNone(s string) string {
	if s == "" {
		return "(not recorded)"
	}
	return s
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	c := &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version of this binary",
		Long: `Print what this binary was built from: the module version (set by
` + "`go install …@vX.Y.Z`" + ` or a release build), the VCS revision and its time,
whether the tree had local changes, and the Go toolchain.`,
		Example: `  wave-orchestrator version
  wave-orchestrator version --json
  wave-orchestrator --version`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return readBuildInfo().write(c.OutOrStdout(), asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return c
}
