package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRouteCompactAndExport: route --compact writes no OpenSM dump (and
// removes a stale one), the compact set verifies and diffs like the full
// one, and export writes OpenSM's LFT dump byte for byte as route writes
// it, from a set or from its compact LFT file alone.
func TestRouteCompactAndExport(t *testing.T) {
	full, compact := t.TempDir(), t.TempDir()
	fab := filepath.Join(t.TempDir(), "torus.topo")
	if _, _, err := run(t, "gen", "torus", "--dims", "3x3x3", "--hosts", "2", "-o", fab); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		args []string
	}{{full, nil}, {compact, []string{"--compact"}}} {
		// dor: SL2VL tables per switch (the dateline), so nuesm.sl2vl has rows
		args := append([]string{"route", fab, "--engine", "dor", "--vls", "2", "-q", "-o", c.dir}, c.args...)
		if c.dir == compact {
			// a dump of an earlier run: route --compact must not leave
			// it to contradict the new tables
			if err := os.WriteFile(filepath.Join(c.dir, "opensm-lfts.dump"), []byte("stale\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if out, errOut, err := run(t, args...); err != nil {
			t.Fatalf("%v: %v\n%s%s", args, err, out, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(compact, "opensm-lfts.dump")); err == nil {
		t.Fatal("route --compact left opensm-lfts.dump")
	}
	for _, f := range []string{"nuesm.lft", "nuesm.sl", "nuesm.sl2vl", "fabric.topo"} {
		a, errA := os.ReadFile(filepath.Join(full, f))
		b, errB := os.ReadFile(filepath.Join(compact, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s differs between route and route --compact (%v, %v)", f, errA, errB)
		}
	}
	if out, _, err := run(t, "verify", compact); err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("verify of the compact set: %v\n%s", err, out)
	}
	if out, _, err := run(t, "diff", filepath.Join(full, "opensm-lfts.dump"), compact); err != nil || !strings.Contains(out, "no changes") {
		t.Fatalf("diff of the text dump and the compact set: %v\n%s", err, out)
	}
	for _, src := range []string{compact, filepath.Join(compact, "nuesm.lft")} {
		exp := t.TempDir()
		out, _, err := run(t, "export", src, "-o", exp)
		if err != nil {
			t.Fatalf("export %s: %v", src, err)
		}
		if !strings.Contains(out, filepath.Join(exp, "opensm-lfts.dump")) {
			t.Errorf("export does not name what it wrote:\n%s", out)
		}
		want, _ := os.ReadFile(filepath.Join(full, "opensm-lfts.dump"))
		got, err := os.ReadFile(filepath.Join(exp, "opensm-lfts.dump"))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("export %s: opensm-lfts.dump differs from route's (%v)", src, err)
		}
		if _, err := os.Stat(filepath.Join(exp, "opensm-sl2vl.dump")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := run(t, "export", filepath.Join(t.TempDir(), "none"), "-o", t.TempDir()); err == nil {
		t.Fatal("export of a missing set succeeded")
	}
}
