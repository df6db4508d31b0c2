package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/studies/placement"
)

func TestPlacementCLI(t *testing.T) {
	dir := t.TempDir()
	roles, dump := filepath.Join(dir, "roles.txt"), filepath.Join(dir, "t.topo")
	out, _, err := run(t, "study", "placement", "--dims", "8x8", "--fail", "4,3", "--fail", "(6,2)", "--roles", roles, "--topo", dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"I/O nodes      13", "histogram      d1=46 d2=5", "(4,2): (4,3) (d1) -> (6,2) (d2)", "(4,2): (6,2) (d2) -> (3,1) (d2)", "(6,3): (6,2) (d1) -> (7,4) (d2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	f, err := os.Open(roles)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := placement.ReadRoles(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.IONodes()) != 11 {
		t.Errorf("roles file: %d healthy I/O nodes, want 11", len(r.IONodes()))
	}
	res, err := ibnetdiscover.ParseFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	io := 0
	for _, n := range res.Fabric.Nodes {
		if strings.HasSuffix(n.Desc, "role=io") {
			io++
		}
	}
	if io != 11 {
		t.Errorf("dump: %d CAs with role=io, want 11", io)
	}
	out, _, err = run(t, "study", "placement", "--dims", "10x10", "--w", "16")
	if err != nil || !strings.Contains(out, "perfect-delete") || !strings.Contains(out, "I/O nodes      16") {
		t.Errorf("--w 16: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"study", "placement"},
		{"study", "placement", "--dims", "8x8", "--method", "perfect"},
		{"study", "placement", "--dims", "8x8", "--fail", "1,1"},
		{"study", "placement", "--dims", "8x8", "--fail", "9,1"},
		{"study", "placement", "--dims", "1x8"},
	} {
		if _, _, err := run(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
