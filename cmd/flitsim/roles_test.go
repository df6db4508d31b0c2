package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/exitstatus"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/studies/placement"
	"github.com/nuesm/nuesm/topo"
)

// writeRoles writes the roles file of an RQP t=1 placement of dims, with
// the I/O nodes in fail failed over, and returns its path and text.
func writeRoles(t *testing.T, dims string, fail ...int) (string, *placement.Assignment) {
	t.Helper()
	tor, err := placement.ParseDims(dims)
	if err != nil {
		t.Fatal(err)
	}
	p, err := placement.Build(tor, "rqp", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := placement.Assign(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(fail) > 0 {
		if a, _, err = placement.Failover(a, fail); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := placement.WriteRoles(&b, a); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "roles.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, a
}

// torusNet is a generated torus (one CA per switch) routed by DOR.
func torusNet(t *testing.T, dims []int) *flitsim.Network {
	t.Helper()
	tp, err := topo.Torus(dims, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	e, err := routing.Lookup("dor")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Route(t.Context(), g, routing.Options{MaxVLs: 2, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	n, err := flitsim.NewNetwork(g, r, flitsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRolesIONodes: the roles file's assignment, switch i = torus node i,
// becomes the io pattern's I/O nodes: I/O and failed nodes idle, every
// compute node's I/O messages to its (failed-over) I/O node.
func TestRolesIONodes(t *testing.T) {
	n := torusNet(t, []int{8, 8})
	path, a := writeRoles(t, "8x8", 0) // (0,0) fails: its nodes move on
	io, err := rolesIONodes(path, n)
	if err != nil {
		t.Fatal(err)
	}
	failedSeen := false
	for i := int32(0); i < int32(n.NumNodes()); i++ {
		s := int(n.NodeSwitch(i))
		switch a.Role(s) {
		case "compute":
			if got := int(n.NodeSwitch(io[i])); got != a.Of[s] || a.Of[s] == 0 {
				t.Errorf("node %d on switch %d sends I/O to switch %d, assigned %d", i, s, got, a.Of[s])
			}
		case "failed":
			failedSeen = true
			fallthrough
		default:
			if io[i] != -1 {
				t.Errorf("%s node %d has I/O node %d", a.Role(s), i, io[i])
			}
		}
	}
	if !failedSeen {
		t.Error("the failed I/O node is missing")
	}

	// Roles of another torus are refused: a different node count, and
	// the same count with other radices (coordinates disagree).
	if _, err := rolesIONodes(path, torusNet(t, []int{4, 4})); err == nil || !strings.Contains(err.Error(), "64 nodes") {
		t.Errorf("8x8 roles on 4x4: %v", err)
	}
	p84, _ := writeRoles(t, "8x4")
	if _, err := rolesIONodes(p84, torusNet(t, []int{4, 8})); err == nil || !strings.Contains(err.Error(), "switch 4 of the fabric") {
		t.Errorf("8x4 roles on 4x8: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("roles v1 dims=8x8\nnode 0 (0,0) io 0 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := rolesIONodes(bad, n); err == nil || !strings.Contains(err.Error(), "bad roles file") {
		t.Errorf("truncated roles file: %v", err)
	}
}

// TestRunRoles: flitsim run --traffic io --roles FILE sends from the
// compute nodes of the file only (RQP t=1 on 8x8: 13 I/O nodes, so 51 of
// 64 nodes send), and the I/O class is simulated.
func TestRunRoles(t *testing.T) {
	path, _ := writeRoles(t, "8x8")
	out, _, err := run(t, "run", "--gen", "torus", "--gen-param", "dims=8x8", "--gen-param", "hosts=1", "--engine", "dor",
		"--traffic", "io", "--roles", path, "--io-ratio", "0.2", "--load", "0.2", "--cycles", "2000", "--warmup", "500", "--no-bound")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"64 (51 sending)", "class io ", "class compute "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, _, err := run(t, "run", "--gen", "torus", "--gen-param", "dims=4x4", "--gen-param", "hosts=1", "--engine", "dor",
		"--traffic", "io", "--roles", path, "--no-bound"); err == nil || exitCode(err) != exitstatus.Input {
		t.Errorf("roles of an 8x8 torus on 4x4: exit %d, %v; want an input error (exit 3), the file's content is no flag", exitCode(err), err)
	}
}
