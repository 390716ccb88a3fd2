// Package buildinfo names this build of payability.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version is payability's own version; it appears in the check and memo user
// agent. A release build sets it from the tag (.goreleaser.yaml: -ldflags
// -X github.com/exchangerebel/payability/internal/buildinfo.Version=1.2.3);
// any other build says the version of this source.
var Version = "0.1.0"

// Commit and Date are the revision and commit time a release build stamps
// (-X …/buildinfo.Commit, …/buildinfo.Date); empty otherwise. They stand in
// for vcs.revision and vcs.time when the build recorded none (a release
// builds with -trimpath from a clean checkout, and GOFLAGS=-buildvcs=false
// drops them).
var Commit, Date string

// UserAgent is the user agent of check and memo fetches.
var UserAgent = "payability/" + Version

// Info is what the binary knows about how it was built (debug.ReadBuildInfo).
// A field the build did not record is "".
type Info struct {
	// Module is the main module's path and Version its module version:
	// "(devel)" for a build from a checkout, v1.2.3 (or a pseudo-version)
	// for `go install …@version`.
	Module, ModuleVersion string
	// Revision and Time are the VCS revision and commit time (vcs.revision,
	// vcs.time); Modified is true when the work tree had local changes.
	Revision, Time string
	Modified       bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Read returns the build information embedded in the running binary.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Stamped(Info{})
	}
	return Stamped(FromBuildInfo(bi))
}

// Stamped fills the revision and time the build did not record from Commit
// and Date; what the build recorded wins.
func Stamped(in Info) Info {
	if in.Revision == "" {
		in.Revision = Commit
	}
	if in.Time == "" {
		in.Time = Date
	}
	return in
}

// FromBuildInfo extracts Info from debug.BuildInfo.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	in := Info{Module: bi.Main.Path, ModuleVersion: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// Lines renders the information for `payability version`, one "name value"
// line each; what the build did not record is "unknown".
func (in Info) Lines() []string {
	or := func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "unknown"
		}
		return s
	}
	rev := or(in.Revision)
	if in.Revision != "" && in.Modified {
		rev += " (modified)"
	}
	return []string{
		"payability " + Version,
		"module     " + or(in.Module) + " " + or(in.ModuleVersion),
		"revision   " + rev,
		"time       " + or(in.Time),
		"go         " + or(in.GoVersion),
	}
}
