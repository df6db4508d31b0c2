// Package simtest builds the routed fabrics simulator tests share: a
// generated topology, compiled and routed by a registered engine, built
// once per test binary. It imports the product's engines (nue, dfsssp and
// the baselines); a test needing another engine imports its package.
package simtest

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

// Fixture is a generated fabric routed by one engine. It is shared
// between tests and must not be modified.
type Fixture struct {
	Topo *topo.Topology
	G    *fabric.Graph
	R    *lft.Routing
}

var (
	mu    sync.Mutex
	cache = map[string]*Fixture{}
)

// Routed returns the fabric made by gen (name keys the cache), routed by
// engine with maxVLs; failures end the test.
func Routed(t testing.TB, name string, gen func() (*topo.Topology, error), engine string, maxVLs int) *Fixture {
	t.Helper()
	key := name + "/" + engine
	mu.Lock()
	defer mu.Unlock()
	if f, ok := cache[key]; ok {
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
	f := &Fixture{Topo: tp, G: g, R: r}
	cache[key] = f
	return f
}

// RSIBR is the RSI fabric with BR super nodes (sn of them), routed by
// minhop on one VL.
func RSIBR(t testing.TB, sn int) *Fixture {
	return Routed(t, "rsi-br-"+string(rune('0'+sn)), func() (*topo.Topology, error) { return topo.RSI("BR", sn, 1) }, "minhop", 1)
}

// DragonflyBalanced2 is the balanced Dragonfly with p = 2 (9 groups, 72
// nodes), routed by minhop on one VL.
func DragonflyBalanced2(t testing.TB) *Fixture {
	return Routed(t, "df2", func() (*topo.Topology, error) { return topo.DragonflyBalanced(2) }, "minhop", 1)
}
