package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/internal/exitstatus"
)

// TestExitCodes: flitsim sorts its errors as nuesm does (exitHelp, which
// --help shows): the command line's mistakes exit 2 in every subcommand,
// an unreadable input 3, unsafe tables 4 and anything else 1.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.topo")
	if err := os.WriteFile(garbage, []byte("no dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	torus := []string{"--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor"}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"nosuch"}, exitstatus.Usage},
		{[]string{"run", "--bogus"}, exitstatus.Usage},
		{[]string{"run", "--default", "--load", "abc"}, exitstatus.Usage},
		{[]string{"run", "a.topo", "b.topo"}, exitstatus.Usage},
		{[]string{"run", "--default", "--vls", "0"}, exitstatus.Usage},
		{[]string{"sweep", "--default", "--vls", "16", "-o", out}, exitstatus.Usage},
		{[]string{"run", "--gen", "nosuch"}, exitstatus.Usage},
		{[]string{"run", "--gen", "torus", "--gen-param", "dims"}, exitstatus.Usage},
		{[]string{"run", "--default", "--engine", "nosuch"}, exitstatus.Usage},
		{append([]string{"run", "--fail-links", "999"}, torus...), exitstatus.Usage},
		{append([]string{"run", "--warmup", "0"}, torus...), exitstatus.Usage},
		{append([]string{"run", "--load", "2", "--no-bound"}, torus...), exitstatus.Usage},
		{append([]string{"run", "--policy", "nosuch"}, torus...), exitstatus.Usage},
		{append([]string{"run", "--policy", "min,ugal"}, torus...), exitstatus.Usage},
		{append([]string{"run", "--vlarb-high", "0:x"}, torus...), exitstatus.Usage},
		{[]string{"sweep", "--default"}, exitstatus.Usage}, // no -o
		{[]string{"sweep", "--default", "--plots", "gif", "-o", out}, exitstatus.Usage},
		{[]string{"sweep", "--default", "--loads", "5", "-o", out}, exitstatus.Usage},
		{[]string{"sweep", "--default", "--lfts", dir, "-o", out}, exitstatus.Usage},
		{[]string{"merge", dir}, exitstatus.Usage}, // no -o
		{[]string{"merge", dir, "-o", out, "--plots", "gif"}, exitstatus.Usage},
		{[]string{"summary"}, exitstatus.Usage},
		{[]string{"run", filepath.Join(dir, "nosuch.topo")}, exitstatus.Input},
		{[]string{"run", garbage}, exitstatus.Input},
		{[]string{"run", "--default", "--lfts", filepath.Join(dir, "nosuch")}, exitstatus.Input},
		{[]string{"merge", filepath.Join(dir, "nosuch"), "-o", out}, exitstatus.Input},
		{[]string{"summary", filepath.Join(dir, "nosuch")}, exitstatus.Input},
		{[]string{"run", "--gen", "ring", "--engine", "minhop"}, exitstatus.Unsafe}, // the verifier refuses its tables
		{append([]string{"run", "--cycles", "300", "--warmup", "100", "--json", filepath.Join(garbage, "out.json")}, torus...), exitstatus.Failure},
	} {
		_, _, err := run(t, c.args...)
		if got := exitCode(err); got != c.code {
			t.Errorf("flitsim %s: exit %d (%v), want %d", strings.Join(c.args, " "), got, err, c.code)
		}
	}
	help, _, _ := run(t, "--help")
	if !strings.Contains(help, "Exit status: 0 success") {
		t.Error("--help does not document the exit statuses")
	}
}
