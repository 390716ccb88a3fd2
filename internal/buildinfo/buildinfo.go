// Package buildinfo names this build of payability.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version is payability's own version; it appears in the check and memo user agent.
const Version = "0.1.0"

// UserAgent is the user agent of check and memo fetches.
const UserAgent = "payability/" + Version

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
		return Info{}
	}
	return FromBuildInfo(bi)
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
