package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/defaults"
	"github.com/nuesm/nuesm/internal/dumptest"
	"github.com/nuesm/nuesm/internal/ibtest"
)

// runBounded runs the CLI like run, failing the test if the command does
// not return within the test's deadline (a read that hangs).
func runBounded(t *testing.T, args ...string) error {
	t.Helper()
	return ibtest.Returns(t, "nuesm "+strings.Join(args, " "), func() error {
		_, _, err := run(t, args...)
		return err
	})
}

// TestDumpReadsBounded: every command that reads a dump refuses
// /dev/zero and a named pipe nothing writes to at once, as an input
// error, and a dump over NUESM_MAX_DUMP_BYTES; a bad limit is a usage
// error.
func TestDumpReadsBounded(t *testing.T) {
	dumps := dumptest.Unreadable(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if _, _, err := run(t, "route", "--default", "-q", "-o", good); err != nil {
		t.Fatal(err)
	}
	commands := map[string]func(dump string) []string{
		"info":   func(d string) []string { return []string{"info", d} },
		"route":  func(d string) []string { return []string{"route", d, "-q", "-o", filepath.Join(dir, "out")} },
		"verify": func(d string) []string { return []string{"verify", d, good} },
		"diff":   func(d string) []string { return []string{"diff", "--fabric", d, good, good} },
		"plan":   func(d string) []string { return []string{"plan", "--fabric", d, good, good} },
		"export": func(d string) []string { return []string{"export", good, "--fabric", d, "-o", filepath.Join(dir, "x")} },
		"dot":    func(d string) []string { return []string{"dot", d} },
		"sar":    func(d string) []string { return []string{"study", "sar", d, "-q"} },
	}
	for name, args := range commands {
		for dump, want := range dumps {
			err := runBounded(t, args(dump)...)
			if !errors.Is(err, want) || exitCode(err) != exitInput || !strings.Contains(err.Error(), dump) {
				t.Errorf("%s %s: exit %d, %v; want an input error (%v)", name, dump, exitCode(err), err, want)
			}
		}
	}
	dump := filepath.Join(good, "fabric.topo")
	t.Setenv(defaults.EnvMaxDumpBytes, "1000")
	for name, args := range commands {
		err := runBounded(t, args(dump)...)
		if !errors.Is(err, ibnetdiscover.ErrTooLarge) || exitCode(err) != exitInput || !strings.Contains(err.Error(), "more than the limit of 1000 bytes") {
			t.Errorf("%s over %s: exit %d, %v", name, defaults.EnvMaxDumpBytes, exitCode(err), err)
		}
	}
	t.Setenv(defaults.EnvMaxDumpBytes, "lots")
	if err := runBounded(t, "info", dump); exitCode(err) != exitUsage || !strings.Contains(err.Error(), defaults.EnvMaxDumpBytes) {
		t.Errorf("a bad %s: exit %d, %v, want a usage error naming it", defaults.EnvMaxDumpBytes, exitCode(err), err)
	}
	t.Setenv(defaults.EnvMaxDumpBytes, "")
	if err := runBounded(t, "info", dump); err != nil {
		t.Errorf("within the default limit: %v", err)
	}
}
