// Package tooltest lets tests that drive a real command-line program
// (rsvg-convert, dot) skip loudly when it is missing, and fail instead in
// CI, with the NUESM_REQUIRE_TOOLS convention of internal/ibtest.
package tooltest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// EnvRequire names the environment variable that turns "tool missing"
// from a skip into a failure (the same as ibtest.EnvRequire).
const EnvRequire = "NUESM_REQUIRE_TOOLS"

// Require returns the paths of programs; if some are missing it skips t
// with a loud message naming them and the Debian packages that provide
// them, or fails t when NUESM_REQUIRE_TOOLS is set to anything but "" or
// "0".
func Require(t testing.TB, debianPackages string, programs ...string) []string {
	t.Helper()
	var paths, missing []string
	for _, p := range programs {
		path, err := exec.LookPath(p)
		if err != nil {
			missing = append(missing, p)
		}
		paths = append(paths, path)
	}
	if len(missing) == 0 {
		return paths
	}
	msg := "REAL-TOOL TEST NOT RUN: missing " + strings.Join(missing, ", ") + " (Debian packages: " + debianPackages + ")"
	if v := os.Getenv(EnvRequire); v != "" && v != "0" {
		t.Fatalf("%s, and %s=%s demands them", msg, EnvRequire, v)
	}
	t.Skip(msg)
	return nil
}
