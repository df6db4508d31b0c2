package fip

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// pathsBound is flitsim's bound (1/max channel load under uniform demand)
// of engine e's routing of f.
func pathsBound(t *testing.T, f *fabric.Fabric, e string) float64 {
	t.Helper()
	g := compile(t, f)
	eng, err := routing.Lookup(e)
	if err != nil {
		t.Fatal(err)
	}
	r, err := eng.Route(context.Background(), g, routing.Options{MaxVLs: 8, Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	net, err := flitsim.NewNetwork(g, r, flitsim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := net.Bound(flitsim.Traffic{Pattern: flitsim.Uniform, Load: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return b.Saturation
}

// shuffleLIDs deals the hosts' LIDs out again in a random order: the
// same fabric, the same capacity, another LID order.
func shuffleLIDs(f *fabric.Fabric, seed uint64) *fabric.Fabric {
	f = f.Clone()
	var ports []*fabric.Port
	for i := range f.Nodes {
		if f.Nodes[i].Kind != fabric.CA {
			continue
		}
		for p := range f.Nodes[i].Ports {
			if f.Nodes[i].Ports[p].LID != 0 {
				ports = append(ports, &f.Nodes[i].Ports[p])
			}
		}
	}
	r := rand.New(rand.NewPCG(seed, 0))
	r.Shuffle(len(ports), func(i, j int) { ports[i].LID, ports[j].LID = ports[j].LID, ports[i].LID })
	return f
}

// TestMinHopLIDOrder pins the mechanism bench/fip/NOTES.md gives for
// Up*/Down* and MinHop gaining throughput as the fat tree fails: on the
// intact k=4, n=3 tree with the generator's LIDs (a leaf's hosts
// consecutive) every switch balances LIDs by count in the same order, so
// the choices line up and 192 of the 63·64 paths meet on one channel
// (bound 63/192); any reshuffle of the LIDs, which changes no capacity,
// spreads them, as a failure near some switches does by changing their
// candidate ports.
func TestMinHopLIDOrder(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"minhop", "updn"} {
		ordered := pathsBound(t, tp.Fabric, e)
		if !near(ordered, 63.0/192) {
			t.Fatalf("%s, ordered LIDs: paths' bound %g, want 63/192", e, ordered)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			if b := pathsBound(t, shuffleLIDs(tp.Fabric, seed), e); b <= ordered*1.1 {
				t.Errorf("%s, LIDs shuffled (seed %d): paths' bound %g, want well above the ordered %g", e, seed, b, ordered)
			} else {
				t.Logf("%s, LIDs shuffled (seed %d): paths' bound %.3f (ordered %.3f)", e, seed, b, ordered)
			}
		}
	}
}
