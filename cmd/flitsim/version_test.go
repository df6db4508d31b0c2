package main

import (
	"bytes"
	"testing"

	"github.com/nuesm/nuesm/internal/buildinfo"
)

// TestVersionFlag: --version and -V print the build (module version,
// commit) and nothing else; internal/buildinfo checks a built binary.
func TestVersionFlag(t *testing.T) {
	for _, flag := range []string{"--version", "-V"} {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs([]string{flag})
		if err := root.Execute(); err != nil {
			t.Fatalf("flitsim %s: %v", flag, err)
		}
		if want := "flitsim version " + buildinfo.Version() + "\n"; out.String() != want {
			t.Errorf("flitsim %s:\n got %q\nwant %q", flag, out.String(), want)
		}
	}
}
