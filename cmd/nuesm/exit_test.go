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

// TestExitCodesGenStudy: gen and the study commands sort their errors as
// the other commands do: bad flags, parameters and settings are usage
// errors, unreadable inputs input errors, I/O failures 1.
func TestExitCodesGenStudy(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"gen", "nosuch"}, exitUsage},
		{[]string{"gen", "torus", "--dims", "4x4"}, exitUsage}, // no -o
		{[]string{"gen", "torus", "--dims", "4xq", "-o", out}, exitUsage},
		{[]string{"gen", "torus", "--dims", "4x4", "--format", "foo", "-o", out}, exitUsage},
		{[]string{"gen", "torus", "--dims", "4x4", "--fail-links", "999", "-o", out}, exitUsage},
		{[]string{"gen", "torus", "--dims", "4x4", "-o", filepath.Join(dir, "nosuch", "x")}, exitFailure},
		{[]string{"route", "--default"}, exitUsage}, // no -o
		{[]string{"export", good(t, dir), "--fabric", "f", "--default", "-o", out}, exitUsage},
		{[]string{"study", "nosuch"}, exitUsage},
		{[]string{"study", "addressing-report", "--radix", "x"}, exitUsage},
		{[]string{"study", "addressing-report", "--kinds", "nosuch"}, exitUsage},
		{[]string{"study", "addressing-report", "--radix", "8", "--kinds", "clos3", "--measure", "nosuch"}, exitUsage},
		{[]string{"study", "fip", "--default"}, exitUsage}, // no -o
		{[]string{"study", "fip", "--default", "--engines", "nosuch", "-o", out}, exitUsage},
		{[]string{"study", "fip", "--default", "--patterns", "nosuch", "-o", out}, exitUsage},
		{[]string{"study", "fip", "--default", "--switching", "x", "-o", out}, exitUsage},
		{[]string{"study", "fip", "--default", "--years", "0", "-o", out}, exitUsage},
		{[]string{"study", "fip", "--default", "--load", "0", "-o", out}, exitUsage},
		{[]string{"study", "fip", "--default", "--link-rate", "0", "--switch-rate", "0", "-o", out}, exitUsage},
		{[]string{"study", "fip", "merge", filepath.Join(dir, "nosuch.json")}, exitUsage}, // no -o
		{[]string{"study", "fip", "merge", filepath.Join(dir, "nosuch.json"), "-o", out}, exitInput},
		{[]string{"study", "novacube-report", "--props", "x"}, exitUsage},
		{[]string{"study", "placement"}, exitUsage},
		{[]string{"study", "placement", "--dims", "8xq"}, exitUsage},
		{[]string{"study", "placement", "--dims", "8x8", "--method", "nosuch"}, exitUsage},
		{[]string{"study", "placement", "--dims", "8x8", "--fail", "99,99"}, exitUsage},
		{[]string{"study", "rsi-fdfr", "--supernodes", "3"}, exitUsage}, // neither --fail nor --sweep
		{[]string{"study", "rsi-fdfr", "--layer1", "XX", "--sweep", "nodes"}, exitUsage},
		{[]string{"study", "rsi-fdfr", "--layer1", "BR", "--supernodes", "3", "--fail", "bogus"}, exitUsage},
		{[]string{"study", "rsi-fdfr", "--rule", "nosuch"}, exitUsage},
		{[]string{"study", "sar", "--default", "--engines", "nosuch"}, exitUsage},
		{[]string{"study", "sar", "--default", "--seeds", "x"}, exitUsage},
		{[]string{"study", "sar", "--default", "--allocs", "x"}, exitUsage},
		{[]string{"study", "sar", "--default", "--vls", "16"}, exitUsage},
		{[]string{"study", "sar", "--default", "--vls", "0"}, exitUsage},
		{[]string{"study", "sar", filepath.Join(dir, "nosuch.topo")}, exitInput},
		{[]string{"study", "tables-report", "--layer1", "XX"}, exitUsage},
		{[]string{"study", "tables-report", "--supernodes", "x"}, exitUsage},
		{[]string{"study", "vc-audit", "nosuch"}, exitUsage},
		{[]string{"study", "vc-audit", "torus", "--param", "x"}, exitUsage},
		{[]string{"study", "vc-audit", "torus", "--policy", "bogus"}, exitUsage},
		{[]string{"study", "vc-audit", "torus", "--misroute", "x"}, exitUsage},
		{[]string{"study", "vc-audit", "torus", "--minimal", "x"}, exitUsage},
		{[]string{"study", "vc-audit", "torus", "--minimal", "tables"}, exitUsage},
		{[]string{"study", "vc-audit", "rsi", "--local", "nosuch"}, exitUsage},
		{[]string{"study", "vc-audit", "torus", "--local", "dor"}, exitUsage},
		{[]string{"study", "tables-report", "--local", "nosuch"}, exitUsage},
		{[]string{"study", "rsi-vc", "--policy", "bogus"}, exitUsage},
		{[]string{"study", "rsi-vc", "--supernodes", "x"}, exitUsage},
	} {
		_, _, err := run(t, c.args...)
		if got := exitCode(err); got != c.code {
			t.Errorf("nuesm %s: exit %d (%v), want %d", strings.Join(c.args, " "), got, err, c.code)
		}
	}
	if _, _, err := run(t, "study"); err != nil {
		t.Errorf("nuesm study (help): %v", err)
	}
}

// good writes a verified table set under dir once and returns it.
func good(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "good")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	if _, _, err := run(t, "route", "--default", "-q", "-o", p); err != nil {
		t.Fatal(err)
	}
	return p
}
