package dfsssp

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// compile turns a generator's result into a graph.
func compile(t testing.TB, tp *topo.Topology, err error) *fabric.Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// withFailures fails frac of the switch-to-switch cables (non-critical
// only, so every pair stays connected) and compiles the result.
func withFailures(t testing.TB, tp *topo.Topology, err error, frac float64, seed uint64) *fabric.Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{LinkFraction: frac, Seed: seed, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// verify runs the verifier (CA sources and switch sources) and returns its
// report and error.
func verify(t testing.TB, g *fabric.Graph, r *lft.Routing, maxVLs int, switches bool) (*cdg.Report, error) {
	t.Helper()
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: maxVLs, SwitchSources: switches})
	if rep == nil {
		t.Fatalf("verify: %v", err)
	}
	return rep, err
}

func routeSSSP(t testing.TB, g *fabric.Graph, opt routing.Options) *lft.Routing {
	t.Helper()
	r, err := RouteSSSP(context.Background(), g, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
