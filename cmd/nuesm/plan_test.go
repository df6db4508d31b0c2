package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ringTables routes a six-switch ring with Up*/Down* from two roots: two
// safe routings whose one-shot switch-over loops and deadlocks. It returns
// the fabric and the two table directories.
func ringTables(t *testing.T) (fab, a, b string) {
	t.Helper()
	dir := t.TempDir()
	fab = filepath.Join(dir, "ring.topo")
	if _, _, err := run(t, "gen", "ring", "--switches", "6", "-o", fab); err != nil {
		t.Fatal(err)
	}
	a, b = filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, c := range [][2]string{{a, "ring r0"}, {b, "ring r3"}} {
		if _, _, err := run(t, "route", fab, "--engine", "updn", "--root", c[1], "-q", "-o", c[0]); err != nil {
			t.Fatal(err)
		}
	}
	return fab, a, b
}

func TestPlanCLI(t *testing.T) {
	fab, a, b := ringTables(t)

	out, _, err := run(t, "plan", "--fabric", fab, a, b, "--verify")
	if err != nil {
		t.Fatalf("plan --verify: %v\n%s", err, out)
	}
	for _, want := range []string{"verdict:        SAFE", "[ok  ] deadlock freedom", "[ok  ] in-order delivery", "pause", "resume"} {
		if !strings.Contains(out, want) {
			t.Fatalf("plan --verify lacks %q:\n%s", want, out)
		}
	}

	// What OpenSM would do: everything at once. Caught, exit status 1.
	out, _, err = run(t, "plan", "--fabric", fab, a, b, "--one-shot", "--allow-reorder")
	if err == nil || !strings.Contains(out, "UNSAFE") || !strings.Contains(out, "[FAIL] deadlock freedom") || !strings.Contains(out, "[FAIL] loop freedom") {
		t.Fatalf("one-shot: err=%v\n%s", err, out)
	}

	// JSON, and NEW given as a directory holding fabric.topo.
	nb := filepath.Join(t.TempDir(), "new")
	if err := os.MkdirAll(nb, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"nuesm.lft", "nuesm.sl", "nuesm.sl2vl"} {
		copyFile(t, filepath.Join(b, f), filepath.Join(nb, f))
	}
	copyFile(t, fab, filepath.Join(nb, "fabric.topo"))
	out, _, err = run(t, "plan", filepath.Join(a, "opensm-lfts.dump"), nb, "--verify", "--json", "--allow-reorder")
	if err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	var pj struct {
		Metrics struct {
			Steps int
		}
		Steps []struct {
			Kind string
			LFT  []struct{ Entries [][3]int }
		}
		Verify struct {
			Safe        bool
			Obligations []struct {
				Name string
				OK   bool
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &pj); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	writes := 0
	for _, s := range pj.Steps {
		for _, sw := range s.LFT {
			writes += len(sw.Entries)
		}
	}
	if !pj.Verify.Safe || len(pj.Steps) == 0 || writes == 0 || len(pj.Verify.Obligations) < 8 {
		t.Fatalf("plan JSON: safe %v, %d steps, %d writes, %d obligations", pj.Verify.Safe, len(pj.Steps), writes, len(pj.Verify.Obligations))
	}

	// One VL and no pauses allowed: no live plan exists; say so.
	out, _, err = run(t, "plan", "--fabric", fab, a, b, "--vls", "1", "--allow-reorder", "--no-pause")
	if err == nil || !strings.Contains(err.Error(), "need a drain phase") || !strings.Contains(out, "NO LIVE PLAN") {
		t.Fatalf("no-pause: err=%v\n%s", err, out)
	}

	// Bad input: missing fabric, unreadable tables.
	if err := os.Remove(filepath.Join(nb, "fabric.topo")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "plan", a, nb); err == nil || !strings.Contains(err.Error(), "no fabric: give --fabric FILE or --default (NEW has no fabric.topo") {
		t.Fatalf("missing fabric: %v", err)
	}
	if _, _, err := run(t, "plan", "--fabric", fab, a, filepath.Join(a, "nosuch")); err == nil {
		t.Fatal("missing NEW accepted")
	}
}

// TestPlanDiffVerifyOnRouteOutput: "nuesm route -o" writes the fabric
// beside its tables, so plan, diff and verify take two route directories
// as they are, and find the same result as with --fabric.
func TestPlanDiffVerifyOnRouteOutput(t *testing.T) {
	fab, a, b := ringTables(t)
	for _, args := range [][]string{{"plan", a, b, "--verify"}, {"diff", a, b}, {"diff", filepath.Join(a, "opensm-lfts.dump"), filepath.Join(b, "opensm-lfts.dump")}} {
		got, _, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, got)
		}
		want, _, err := run(t, append([]string{args[0], "--fabric", fab}, args[1:]...)...)
		if err != nil || got != want {
			t.Fatalf("%v: without --fabric\n%s\nwith --fabric (%v)\n%s", args, got, err, want)
		}
	}
	out, _, err := run(t, "verify", b)
	if err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("verify %s: %v\n%s", b, err, out)
	}
	if out, _, err := run(t, "plan", a, b, "--verify"); err != nil || !strings.Contains(out, "verdict:        SAFE") {
		t.Fatalf("plan on route output: %v\n%s", err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
