package routing

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// Test helpers of the baseline engines (minhop, updn, ftree) and the shared
// path helpers carry a "bl" prefix so that they do not collide with other
// engines' tests in this package.

// blCase is one fabric of the conformance table.
type blCase struct {
	name string
	tree bool // a fat tree: ftree applies, shortest paths are cycle-free
	full bool // an undamaged fat tree (shift-optimal for ftree)
	make func() (*topo.Topology, error)
	fail float64 // link fraction to fail (fail-in-place: non-critical only)
}

func blCases() []blCase {
	return []blCase{
		{name: "ring5", make: func() (*topo.Topology, error) { return topo.Ring(5, 1, nil) }},
		{name: "ring8x2", make: func() (*topo.Topology, error) { return topo.Ring(8, 2, nil) }},
		{name: "ring5-shortcut", make: func() (*topo.Topology, error) { return topo.Ring(5, 1, []int{2, 4}) }},
		{name: "torus4x4", make: func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 1, false) }},
		{name: "torus4x4x4-3%", fail: 0.03, make: func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 4}, 1, false) }},
		{name: "mesh5x3", make: func() (*topo.Topology, error) { return topo.Torus([]int{5, 3}, 2, true) }},
		{name: "hypercube4", make: func() (*topo.Topology, error) { return topo.Hypercube(4, 1) }},
		{name: "fattree-k4n3", tree: true, full: true, make: func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
		{name: "fattree-k3n3", tree: true, full: true, make: func() (*topo.Topology, error) { return topo.FatTree(3, 3, 0) }},
		{name: "fattree-k2n4", tree: true, full: true, make: func() (*topo.Topology, error) { return topo.FatTree(2, 4, 0) }},
		{name: "fattree-k4n3-2%", tree: true, fail: 0.02, make: func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
		{name: "fattree-k4n3-5%", tree: true, fail: 0.05, make: func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
		{name: "clos2-8", tree: true, full: true, make: func() (*topo.Topology, error) { return topo.Clos2(8) }},
		{name: "clos2-12-5%", tree: true, fail: 0.05, make: func() (*topo.Topology, error) { return topo.Clos2(12) }},
		{name: "clos3-8", tree: true, full: true, make: func() (*topo.Topology, error) { return topo.Clos3(8) }},
		{name: "clos3-8-3%", tree: true, fail: 0.03, make: func() (*topo.Topology, error) { return topo.Clos3(8) }},
		{name: "xgft-2;4,4;1,4", tree: true, full: true, make: func() (*topo.Topology, error) { return topo.XGFT(2, []int{4, 4}, []int{1, 4}) }},
		{name: "xgft-3;2,3,2;1,2,3", tree: true, make: func() (*topo.Topology, error) { return topo.XGFT(3, []int{2, 3, 2}, []int{1, 2, 3}) }},
		{name: "random16", make: func() (*topo.Topology, error) { return topo.Random(16, 4, 2, 1) }},
		{name: "random40-5%", fail: 0.05, make: func() (*topo.Topology, error) { return topo.Random(40, 5, 2, 7) }},
		{name: "dragonfly-2,4,2", make: func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 0) }},
		{name: "dragonfly-2,4,2-2%", fail: 0.02, make: func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 0) }},
		{name: "kautz3,2", make: func() (*topo.Topology, error) { return topo.Kautz(3, 2, 2) }},
		{name: "kautz2,4-1%", fail: 0.01, make: func() (*topo.Topology, error) { return topo.Kautz(2, 4, 1) }},
	}
}

// graph builds the case's fabric, with its failures, and compiles it.
func (c blCase) graph(tb testing.TB) *fabric.Graph {
	tb.Helper()
	tp, err := c.make()
	if err != nil {
		tb.Fatal(err)
	}
	f := tp.Fabric
	if c.fail > 0 {
		f, _, err = topo.InjectFailures(f, topo.FailureSpec{LinkFraction: c.fail, Seed: 3, SkipCritical: true})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return blCompile(tb, f)
}

func blCompile(tb testing.TB, f *fabric.Fabric) *fabric.Graph {
	tb.Helper()
	g, err := fabric.Compile(f)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// blTopo compiles a generator's result: blTopo(t)(topo.Clos2(8)).
func blTopo(tb testing.TB) func(*topo.Topology, error) *fabric.Graph {
	return func(tp *topo.Topology, err error) *fabric.Graph {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return blCompile(tb, tp.Fabric)
	}
}

func blRoute(tb testing.TB, e Engine, g *fabric.Graph, opt Options) *lft.Routing {
	tb.Helper()
	r, err := e.Route(context.Background(), g, opt)
	if err != nil {
		tb.Fatalf("%s: %v", e.Name(), err)
	}
	return r
}

// blVerify runs the verifier with one VL (and switches as sources too when
// switchSources) and checks full delivery of connected pairs; acyclic also
// demands a passing report.
func blVerify(tb testing.TB, g *fabric.Graph, r *lft.Routing, acyclic, switchSources bool) *cdg.Report {
	tb.Helper()
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 1, SwitchSources: switchSources})
	if rep == nil {
		tb.Fatalf("%s: verify: %v", r.Engine, err)
	}
	if rep.Delivered != rep.Pairs || rep.Pairs == 0 {
		tb.Fatalf("%s: %d of %d pairs delivered: %v\n%s", r.Engine, rep.Delivered, rep.Pairs, err, rep)
	}
	if rep.VLsUsed != 1 || r.NumVLs != 1 {
		tb.Fatalf("%s: %d VLs used, %d claimed, want 1", r.Engine, rep.VLsUsed, r.NumVLs)
	}
	if acyclic && err != nil {
		tb.Fatalf("%s: %v\n%s", r.Engine, err, rep)
	}
	return rep
}

// blWalk follows the LFTs from switch u to LID d and returns the channels
// used (nil and false on a loop or dead end).
func blWalk(g *fabric.Graph, r *lft.Routing, u int32, d int, buf []int32) ([]int32, bool) {
	buf = buf[:0]
	dsw, _ := g.Owner(d)
	for u != dsw {
		if len(buf) > g.NumSwitches() {
			return nil, false
		}
		c := g.ChannelAt(u, r.Port(u, d))
		if c < 0 {
			return nil, false
		}
		buf = append(buf, c)
		u = g.Head[c]
	}
	return buf, true
}

// blHosts lists the terminals in generator order (CA node order), the
// order the shift pattern numbers them in.
func blHosts(g *fabric.Graph) []int32 {
	var out []int32
	for i, t := range g.Terms {
		if t.Switch >= 0 {
			out = append(out, int32(i))
		}
	}
	return out
}

// blShiftContention returns the largest number of flows of one shift
// permutation (host i sends to host i+s mod N, hosts in the given order or
// generator order when nil) that share a channel, over all shifts s.
func blShiftContention(tb testing.TB, g *fabric.Graph, r *lft.Routing, hosts []int32) int {
	tb.Helper()
	if hosts == nil {
		hosts = blHosts(g)
	}
	N := len(hosts)
	load := make([]int, g.NumChannels())
	var buf []int32
	worst := 0
	for s := 1; s < N; s++ {
		clear(load)
		for i := range N {
			src, dst := g.Terms[hosts[i]], g.Terms[hosts[(i+s)%N]]
			path, ok := blWalk(g, r, src.Switch, int(dst.LID), buf)
			if !ok {
				tb.Fatalf("%s: no route from %d to LID %d", r.Engine, i, dst.LID)
			}
			for _, c := range path {
				load[c]++
				worst = max(worst, load[c])
			}
			buf = path
		}
	}
	return worst
}
