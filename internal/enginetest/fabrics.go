package enginetest

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// Fabric is a generated fabric and the VL limit engines route it under.
type Fabric struct {
	Name string
	Make func() (*topo.Topology, error)
	VLs  int
}

// Build generates and compiles the fabric.
func (f Fabric) Build(t testing.TB) (*topo.Topology, *fabric.Graph) {
	t.Helper()
	tp, err := f.Make()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return tp, g
}

// RepairFabrics are the fabrics the repair and incremental-verification
// tests damage: indirect, direct (with and without wrap-around), random
// and a Dragonfly, each small enough to fail and route many times.
var RepairFabrics = []Fabric{
	{"fattree-k4-n3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }, 4},
	{"torus-4x4x4", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 4}, 2, false) }, 12},
	{"mesh-5x5", func() (*topo.Topology, error) { return topo.Torus([]int{5, 5}, 2, true) }, 4},
	{"random-40-d5", func() (*topo.Topology, error) { return topo.Random(40, 5, 2, 7) }, 8},
	{"dragonfly-2-4-2-9", func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 9) }, 8},
}
