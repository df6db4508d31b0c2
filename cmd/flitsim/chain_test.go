package main

import (
	"strings"
	"testing"

	"github.com/nuesm/nuesm/internal/exitstatus"
)

// TestChainFailureSaidOnce: an engine of the chain whose tables fail
// verification is named once: in the error when the chain fails (not
// also on standard error, not "minhop: minhop:"), as a note when the
// next engine's tables are simulated.
func TestChainFailureSaidOnce(t *testing.T) {
	ring := []string{"run", "--gen", "ring", "--gen-param", "switches=5", "--traffic", "uniform", "--load", "0.5", "--cycles", "2000", "--warmup", "200"}
	_, stderr, err := run(t, append(ring, "--engine", "minhop")...)
	if err == nil || !strings.Contains(err.Error(), "minhop: tables fail verification: cdg: dependency cycle") {
		t.Fatalf("minhop on a ring: %v", err)
	}
	if strings.Contains(stderr, "minhop") {
		t.Errorf("the failed chain's reason is printed twice; standard error:\n%s", stderr)
	}
	out, stderr, err := run(t, append(ring, "--engine", "minhop,updn")...)
	if err != nil || !strings.Contains(out, "engine updn") {
		t.Fatalf("minhop,updn: %v\n%s", err, out)
	}
	if want := "note: minhop failed, the chain went on: tables fail verification: cdg: dependency cycle"; !strings.HasPrefix(stderr, want) || strings.Count(stderr, "minhop") != 1 {
		t.Errorf("fallback note:\n%s\nwant one line starting %q", stderr, want)
	}
}

// TestRootUnknown: a --root that names no switch is a usage error.
func TestRootUnknown(t *testing.T) {
	_, _, err := run(t, "run", "--gen", "ring", "--gen-param", "switches=5", "--engine", "updn", "--root", "nosuch", "--traffic", "uniform", "--load", "0.5", "--cycles", "1000")
	if exitstatus.Code(err) != exitstatus.Usage || !strings.Contains(err.Error(), `--root: routing: no switch or cabled CA has GUID or description "nosuch"`) {
		t.Errorf("unknown root: exit %d, %v", exitstatus.Code(err), err)
	}
}
