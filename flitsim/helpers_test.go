package flitsim

import (
	"context"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"

	_ "github.com/nuesm/nuesm/dfsssp" // registers "dfsssp"
	_ "github.com/nuesm/nuesm/nue"    // registers "nue"
)

// fixture is a generated fabric routed by one engine, built once per test
// binary (fixtures are read-only).
type fixture struct {
	topo *topo.Topology
	g    *fabric.Graph
	r    *lft.Routing
}

var (
	fixMu sync.Mutex
	fixes = map[string]*fixture{}
)

// routed returns the fabric made by gen, routed by engine with maxVLs.
func routed(t testing.TB, name string, gen func() (*topo.Topology, error), engine string, maxVLs int) *fixture {
	t.Helper()
	key := name + "/" + engine
	fixMu.Lock()
	defer fixMu.Unlock()
	if f, ok := fixes[key]; ok {
		return f
	}
	tp, err := gen()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	e, err := routing.Lookup(engine)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Route(context.Background(), g, routing.Options{MaxVLs: maxVLs, Workers: 1})
	if err != nil {
		t.Fatalf("%s on %s: %v", engine, name, err)
	}
	f := &fixture{topo: tp, g: g, r: r}
	fixes[key] = f
	return f
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
