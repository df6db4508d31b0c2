package flitsim

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/simtest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// fixture is a generated fabric routed by one engine (simtest.Fixture).
type fixture struct {
	topo *topo.Topology
	g    *fabric.Graph
	r    *lft.Routing
}

// routed returns the fabric made by gen, routed by engine with maxVLs.
func routed(t testing.TB, name string, gen func() (*topo.Topology, error), engine string, maxVLs int) *fixture {
	t.Helper()
	f := simtest.Routed(t, name, gen, engine, maxVLs)
	return &fixture{topo: f.Topo, g: f.G, r: f.R}
}

func ring5(t testing.TB, engine string) *fixture {
	return routed(t, "ring5", func() (*topo.Topology, error) { return topo.Ring(5, 1, nil) }, engine, 2)
}

func torus(t testing.TB, k int, engine string) *fixture {
	return routed(t, "torus"+string(rune('0'+k)), func() (*topo.Topology, error) { return topo.Torus([]int{k, k}, 1, false) }, engine, 4)
}

func fatTree(t testing.TB, engine string) *fixture {
	return routed(t, "fattree4-2", func() (*topo.Topology, error) { return topo.FatTree(4, 2, 0) }, engine, 1)
}

func network(t testing.TB, f *fixture, cfg Config) *Network {
	t.Helper()
	n, err := NewNetwork(f.g, f.r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
