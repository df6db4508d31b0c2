package fabric_test

import (
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// pr is a short PortRef constructor.
func pr(n fabric.NodeID, p uint8) fabric.PortRef { return fabric.PortRef{Node: n, Port: p} }

func mustAdd(tb testing.TB, b *fabric.Builder, k fabric.NodeKind, guid uint64, nports int, desc string) fabric.NodeID {
	tb.Helper()
	id, err := b.AddNode(k, guid, nports, desc)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func mustConnect(tb testing.TB, b *fabric.Builder, a fabric.NodeID, pa uint8, c fabric.NodeID, pc uint8) {
	tb.Helper()
	if err := b.Connect(pr(a, pa), pr(c, pc)); err != nil {
		tb.Fatal(err)
	}
}

func mustValid(tb testing.TB, f *fabric.Fabric) {
	tb.Helper()
	if err := f.Validate(); err != nil {
		tb.Fatalf("Validate: %v", err)
	}
}

func mustCompile(tb testing.TB, f *fabric.Fabric) *fabric.Graph {
	tb.Helper()
	g, err := fabric.Compile(f)
	if err != nil {
		tb.Fatalf("Compile: %v", err)
	}
	return g
}

// randOpts shapes randomFabric.
type randOpts struct {
	maxSwitches int     // 1..maxSwitches switches
	edgeProb    float64 // probability of a cable between two switches
	maxHosts    int     // 0..maxHosts CAs per switch
	extras      bool    // parallel cables, loopbacks, routers and CA-CA cables
}

// randomFabric builds a random valid fabric: switches with random cables
// between them (possibly disconnected), random host counts, and with
// extras parallel cables, loopback cables, routers and directly cabled CA
// pairs. LIDs are assigned.
func randomFabric(tb testing.TB, r *rand.Rand, o randOpts) *fabric.Fabric {
	tb.Helper()
	const radix = 24
	b := fabric.NewBuilder()
	n := 1 + r.IntN(o.maxSwitches)
	next := make([]uint8, n) // last used port per switch
	sw := make([]fabric.NodeID, n)
	for i := range sw {
		sw[i] = mustAdd(tb, b, fabric.Switch, 0x1000+uint64(i), radix, "")
		b.Node(sw[i]).Enhanced = r.IntN(2) == 0
	}
	free := func(i int) (uint8, bool) {
		if next[i] >= radix {
			return 0, false
		}
		next[i]++
		return next[i], true
	}
	cable := func(i, j int) {
		if i == j && next[i]+2 > radix || next[i]+1 > radix || next[j]+1 > radix {
			return
		}
		pa, _ := free(i)
		pb, _ := free(j)
		mustConnect(tb, b, sw[i], pa, sw[j], pb)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if r.Float64() < o.edgeProb {
				cable(i, j)
				if o.extras && r.IntN(4) == 0 {
					cable(i, j) // parallel cable
				}
			}
		}
		if o.extras && r.IntN(8) == 0 {
			cable(i, i) // loopback
		}
	}
	guid := uint64(0x100000)
	for i := 0; i < n; i++ {
		for h := r.IntN(o.maxHosts + 1); h > 0; h-- {
			p, ok := free(i)
			if !ok {
				break
			}
			kind := fabric.CA
			if o.extras && r.IntN(10) == 0 {
				kind = fabric.Router
			}
			guid += 2
			id := mustAdd(tb, b, kind, guid, 1, "")
			b.Node(id).Ports[1].GUID = guid + 1
			if o.extras && r.IntN(5) == 0 {
				b.Node(id).Ports[1].LMC = uint8(r.IntN(3))
			}
			mustConnect(tb, b, id, 1, sw[i], p)
		}
	}
	if o.extras && r.IntN(3) == 0 {
		x := mustAdd(tb, b, fabric.CA, guid+2, 1, "")
		y := mustAdd(tb, b, fabric.CA, guid+4, 1, "")
		mustConnect(tb, b, x, 1, y, 1)
	}
	f := b.Fabric()
	if err := f.AssignLIDs(uint8(r.IntN(2))); err != nil {
		tb.Fatal(err)
	}
	mustValid(tb, f)
	return f
}
