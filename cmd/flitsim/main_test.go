package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/exitstatus"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// run executes the CLI in-process and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCmd()
	var out, errb bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errb.String(), err
}

func TestRunGenerated(t *testing.T) {
	out, _, err := run(t, "run", "--gen", "fattree", "--gen-param", "k=4", "--gen-param", "n=2", "--engine", "ftree",
		"--traffic", "uniform", "--load", "0.5", "--cycles", "3000", "--warmup", "500")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"16 nodes", "engine ftree", "accepted ", "latency ", "VL0 buffers", "bound            saturation at 1.0000"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Finite all-to-all with JSON on stdout.
	out, _, err = run(t, "run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--traffic", "shift", "--json", "-", "--busiest", "0")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(out, "{")
	var doc struct {
		Result flitsim.Result
		Bound  flitsim.Bound
	}
	if i < 0 || json.Unmarshal([]byte(out[i:]), &doc) != nil {
		t.Fatalf("no JSON document in:\n%s", out)
	}
	if doc.Result.Messages != 240 || doc.Result.MessagesDone != 240 || doc.Result.Completion == 0 || doc.Bound.CompletionCycles == 0 {
		t.Errorf("shift result %+v, bound %+v", doc.Result, doc.Bound)
	}
}

// TestRunFailures: injected link failures reach the routing and the name.
func TestRunFailures(t *testing.T) {
	out, _, err := run(t, "run", "--gen", "torus", "--gen-param", "dims=4x4", "--fail-links", "2", "--fail-seed", "3", "--skip-critical",
		"--engine", "nue", "--traffic", "uniform", "--load", "0.3", "--cycles", "1000", "--warmup", "100")
	if err != nil {
		t.Fatal(err)
	}
	// 4x4 torus: 64 channels and 2×16 node links; two cables fewer is 92.
	if !strings.Contains(out, "fail=2 seed=3") || !strings.Contains(out, "92 links") {
		t.Errorf("failures not applied:\n%s", out)
	}
	if _, _, err := run(t, "run", "--gen", "torus", "--gen-param", "dims=4x4", "--fail-link-fraction", "2", "--engine", "nue"); err == nil {
		t.Error("failure fraction 2 accepted")
	}
}

// TestRunTables routes a fabric, writes the tables as `nuesm route` does,
// and simulates from the files.
func TestRunTables(t *testing.T) {
	dir := t.TempDir()
	tp, err := topo.Torus([]int{4, 4}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	fab := filepath.Join(dir, "torus.topo")
	if err := ibnetdiscover.WriteFile(fab, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := routing.Lookup("dor")
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: 2})
	if err != nil {
		t.Fatal(err)
	}
	for name, write := range map[string]func(string, *fabric.Graph, *lft.Routing) error{
		"opensm-lfts.dump": lft.WriteOpenSMLFTsFile, "nuesm.sl": lft.WriteSLFile, "opensm-sl2vl.dump": lft.WriteOpenSMSL2VLFile,
	} {
		if err := write(filepath.Join(dir, name), g, r); err != nil {
			t.Fatal(err)
		}
	}
	jsonPath := filepath.Join(dir, "out.json")
	out, _, err := run(t, "run", fab, "--lfts", dir, "--traffic", "transpose", "--load", "0.3", "--cycles", "2000", "--json", jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "2 VLs") || !strings.Contains(out, "tables ") {
		t.Errorf("tables not read with their SLs:\n%s", out)
	}
	if b, err := os.ReadFile(jsonPath); err != nil || !bytes.Contains(b, []byte(`"pattern": "transpose"`)) {
		t.Errorf("JSON file: %v", err)
	}
}

func TestRunDeadlock(t *testing.T) {
	out, stderr, err := run(t, "run", "--gen", "ring", "--gen-param", "switches=5", "--engine", "minhop", "--unsafe",
		"--traffic", "uniform", "--load", "1", "--queueing", "fifo", "--packet-flits", "4", "--buffer-flits", "4", "--cycles", "30000")
	if !errors.Is(err, flitsim.ErrDeadlock) || exitCode(err) != exitstatus.Unsafe {
		t.Fatalf("err = %v (exit %d), want a deadlock (exit 4)", err, exitCode(err))
	}
	if !strings.Contains(stderr, "fail verification") || !strings.Contains(out, `DEADLOCK`) || !strings.Contains(out, `"ring r0"`) {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}
	// Without --unsafe the verifier refuses MinHop's tables on a ring.
	if _, _, err := run(t, "run", "--gen", "ring", "--engine", "minhop"); !errors.Is(err, routing.ErrChainFailed) || exitCode(err) != exitstatus.Unsafe {
		t.Errorf("minhop without --unsafe: exit %d, %v", exitCode(err), err)
	}
}

// TestRunErrors: bad flags and arguments are usage errors (exit 2).
func TestRunErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run"}, // no fabric
		{"run", "--gen", "torus", "--default"},
		{"run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--traffic", "nextgroup"}, // torus has no groups
		{"run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--traffic", "tornado"},
		{"run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--switching", "store-and-forward"},
		{"run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--buffer-flits", "2"},
	} {
		if _, _, err := run(t, args...); err == nil || exitCode(err) != exitstatus.Usage {
			t.Errorf("%v: exit %d, %v; want a usage error", args, exitCode(err), err)
		}
	}
}

// TestRunTablesCyclic: --lfts tables with a cyclic CDG are refused, and
// simulated after a warning with --unsafe (where they deadlock).
func TestRunTablesCyclic(t *testing.T) {
	dir := t.TempDir()
	tp, err := topo.Ring(5, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	fab := filepath.Join(dir, "ring.topo")
	if err := ibnetdiscover.WriteFile(fab, tp.Fabric); err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := routing.Lookup("minhop")
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := lft.WriteOpenSMLFTsFile(filepath.Join(dir, "opensm-lfts.dump"), g, r); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", fab, "--lfts", dir, "--traffic", "uniform", "--load", "1", "--queueing", "fifo",
		"--packet-flits", "4", "--buffer-flits", "4", "--cycles", "20000", "--deadlock-window", "500"}
	if _, _, err := run(t, args...); err == nil || !strings.Contains(err.Error(), "fail verification") || !strings.Contains(err.Error(), "--unsafe") {
		t.Errorf("cyclic tables: %v", err)
	}
	_, stderr, err := run(t, append(args, "--unsafe")...)
	if !errors.Is(err, flitsim.ErrDeadlock) || !strings.Contains(stderr, "warning: "+dir) {
		t.Errorf("--unsafe: %v, stderr %q", err, stderr)
	}
}

// TestRunLinkLoads: --link-loads writes every link's window load as CSV,
// which flitsim.ReadLinkLoads reads back for nuesm dot.
func TestRunLinkLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loads.csv")
	if _, _, err := run(t, "run", "--gen", "torus", "--gen-param", "dims=4x4", "--engine", "dor", "--traffic", "transpose",
		"--load", "0.5", "--cycles", "2000", "--link-loads", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "link,kind,from,from_port,to,to_port,flits,utilisation" || len(lines) != 1+64+2*16 || !strings.Contains(string(b), `,channel,"torus (0,0)",`) {
		t.Errorf("link loads:\n%.400s", b)
	}
}
