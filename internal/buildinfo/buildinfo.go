// Package buildinfo tells which build of a command is running: the module
// version and the VCS commit that the Go toolchain stamps into a binary
// built from a checkout (runtime/debug.ReadBuildInfo).
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// Version describes the running binary, e.g.
//
//	v0.0.0-20261126012438-5cff761afd2c (commit 5cff761afd2c7ea4f8bbc720484fea4656d892cb, 2026-11-26T01:24:38Z, go1.26.8)
//
// with "+ local changes" after a commit built from a modified tree, and
// "commit unknown" when the binary carries no VCS information (built
// outside a checkout, or with -buildvcs=false).
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (the binary carries no build information)"
	}
	return format(info)
}

// format renders what Version prints from build information.
func format(info *debug.BuildInfo) string {
	version := info.Main.Version
	if version == "" {
		version = "(devel)"
	}
	set := map[string]string{}
	for _, s := range info.Settings {
		set[s.Key] = s.Value
	}
	var parts []string
	if rev := set["vcs.revision"]; rev != "" {
		c := "commit " + rev
		if set["vcs.modified"] == "true" {
			c += " + local changes"
		}
		parts = append(parts, c)
		if t := set["vcs.time"]; t != "" {
			parts = append(parts, t)
		}
	} else {
		parts = append(parts, "commit unknown")
	}
	if info.GoVersion != "" {
		parts = append(parts, info.GoVersion)
	}
	return fmt.Sprintf("%s (%s)", version, strings.Join(parts, ", "))
}

// AddVersion gives a root command --version and -V (the flag of the
// infiniband-diags tools), printing "<name> version <Version()>".
func AddVersion(root *cobra.Command) {
	root.Version = Version()
	root.Flags().BoolP("version", "V", false, "print the version (module version and commit) and exit")
}
