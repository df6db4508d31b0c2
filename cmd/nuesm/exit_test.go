package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitCodes: usage errors, input errors and unsafe tables have exit
// statuses of their own (exitHelp), and --vls out of range is a usage
// error in every command that takes it.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if _, _, err := run(t, "route", "--default", "-q", "-o", good); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.topo")
	if err := os.WriteFile(garbage, []byte("no dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := dropLFTEntry(t, good) // tables that lose a destination
	torus := filepath.Join(dir, "t.topo")
	if _, _, err := run(t, "gen", "torus", "--dims", "4x4", "-o", torus); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"nosuch"}, exitUsage},
		{[]string{"route", "--bogus"}, exitUsage},
		{[]string{"route", "--default", "-o", dir, "extra", "args"}, exitUsage},
		{[]string{"route", "--default", "--engine", "nosuch", "-o", dir}, exitUsage},
		{[]string{"route", "--default", "--vls", "0", "-o", dir}, exitUsage},
		{[]string{"route", "--default", "--vls", "16", "-o", dir}, exitUsage},
		{[]string{"serve", "--default", "--vls", "99", "--dry-run", "-o", dir}, exitUsage},
		{[]string{"verify", good, "--vls", "99"}, exitUsage},
		{[]string{"verify", good, "--vls", "0"}, exitUsage},
		{[]string{"plan", good, good, "--vls", "0"}, exitUsage},
		{[]string{"info"}, exitUsage},
		{[]string{"info", garbage}, exitInput},
		{[]string{"route", garbage, "-o", dir}, exitInput},
		{[]string{"verify", "--default", filepath.Join(dir, "nosuch.dump")}, exitInput},
		{[]string{"diff", "--default", good, filepath.Join(dir, "nosuch")}, exitInput},
		{[]string{"verify", "--default", bad}, exitUnsafe},
		{[]string{"route", torus, "--engine", "dor", "--vls", "1", "-q", "-o", dir}, exitUnsafe},
	} {
		_, _, err := run(t, c.args...)
		if got := exitCode(err); got != c.code {
			t.Errorf("nuesm %s: exit %d (%v), want %d", strings.Join(c.args, " "), got, err, c.code)
		}
	}
	if _, _, err := run(t, "verify", good, "--vls", "8"); err != nil {
		t.Errorf("verify within the limit: %v", err)
	}
	out, _, _ := run(t, "--help")
	if !strings.Contains(out, "Exit status: 0 success") {
		t.Error("--help does not document the exit statuses")
	}
}
