package routing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// Test helpers of the DOR and LASH tests carry a "dl" prefix so that they
// do not collide with other engines' tests in this package.

func dlGraph(tb testing.TB, tp *topo.Topology, err error) *fabric.Graph {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func dlFabricGraph(tb testing.TB, f *fabric.Fabric) *fabric.Graph {
	tb.Helper()
	g, err := fabric.Compile(f)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// dlVerify runs the verifier with the routing's own VL count as the limit,
// from CA ports and (switchSources) from switches too, and fails on any
// problem.
func dlVerify(tb testing.TB, g *fabric.Graph, r *lft.Routing, switchSources bool) *cdg.Report {
	tb.Helper()
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: r.NumVLs, SwitchSources: switchSources})
	if err != nil {
		if rep != nil {
			tb.Fatalf("%s: verify: %v\n%s", r.Engine, err, rep)
		}
		tb.Fatalf("%s: verify: %v", r.Engine, err)
	}
	return rep
}

// dlCheckMinimal follows the LFTs from every switch to every LID and
// compares the hop count with the BFS distance (shortest paths), or
// (atLeast) only checks that it is not shorter.
func dlCheckMinimal(tb testing.TB, g *fabric.Graph, r *lft.Routing, atLeast bool) {
	tb.Helper()
	S := g.NumSwitches()
	dist, queue := make([]int32, S), make([]int32, S)
	dl := lidsBySwitch(g)
	for d := int32(0); int(d) < S; d++ {
		g.BFS(d, dist, queue)
		for j := dl.off[d]; j < dl.off[d+1]; j++ {
			lid := int(dl.lid[j])
			for u := int32(0); int(u) < S; u++ {
				if dist[u] < 0 {
					continue
				}
				x, hops := u, int32(0)
				for x != d {
					c := g.ChannelAt(x, r.Port(x, lid))
					if c < 0 || hops > int32(S) {
						tb.Fatalf("%s: no path from %q to LID %d", r.Engine, g.SwitchName(u), lid)
					}
					x = g.Head[c]
					hops++
				}
				if r.Port(d, lid) != dl.port[j] {
					tb.Fatalf("%s: LID %d leaves %q on port %d, want %d", r.Engine, lid, g.SwitchName(d), r.Port(d, lid), dl.port[j])
				}
				if hops < dist[u] || (!atLeast && hops != dist[u]) {
					tb.Fatalf("%s: %q -> LID %d: %d hops, distance %d", r.Engine, g.SwitchName(u), lid, hops, dist[u])
				}
			}
		}
	}
}

type dlShape struct {
	dims []int
	mesh bool
	vls  int // expected NumVLs
}

func (c dlShape) String() string {
	kind := "torus"
	if c.mesh {
		kind = "mesh"
	}
	parts := make([]string, len(c.dims))
	for i, k := range c.dims {
		parts[i] = fmt.Sprint(k)
	}
	return kind + strings.Join(parts, "x")
}

// TestDORTori routes tori (odd, even, size-2 and size-3 dimensions), meshes
// and hypercubes: the verifier passes within the VLs DOR claims (2 with a
// dateline, else 1), also from switch sources, and every path is minimal.
func TestDORTori(t *testing.T) {
	cases := []dlShape{
		{[]int{3, 3}, false, 1}, {[]int{4, 4}, false, 2}, {[]int{5, 5}, false, 2}, {[]int{6, 6}, false, 2},
		{[]int{4, 6}, false, 2}, {[]int{2, 4}, false, 2}, {[]int{2, 5}, false, 2}, {[]int{5, 7}, false, 2},
		{[]int{8}, false, 2}, {[]int{9}, false, 2}, {[]int{2, 2, 2}, false, 1}, {[]int{3, 3, 3}, false, 1},
		{[]int{4, 4, 4}, false, 2}, {[]int{5, 3, 4}, false, 2}, {[]int{2, 4, 3}, false, 2}, {[]int{7, 2, 5}, false, 2},
		{[]int{4, 5, 6}, false, 2}, {[]int{3, 2}, false, 1}, {[]int{4, 4, 4, 4}, false, 2}, {[]int{6, 3, 2, 5}, false, 2},
		{[]int{3, 3}, true, 1}, {[]int{4, 5}, true, 1}, {[]int{2, 3, 4}, true, 1}, {[]int{8}, true, 1}, {[]int{6, 6}, true, 1},
	}
	for _, c := range cases {
		t.Run(c.String(), func(t *testing.T) {
			tp, err := topo.Torus(c.dims, 1, c.mesh)
			g := dlGraph(t, tp, err)
			r, err := DOR{}.Route(context.Background(), g, Options{MaxVLs: 2})
			if err != nil {
				t.Fatal(err)
			}
			if r.NumVLs != c.vls {
				t.Fatalf("NumVLs %d, want %d", r.NumVLs, c.vls)
			}
			rep := dlVerify(t, g, r, false)
			if rep.VLsUsed != c.vls {
				t.Fatalf("VLs used %d, want %d\n%s", rep.VLsUsed, c.vls, rep)
			}
			dlVerify(t, g, r, true)
			dlCheckMinimal(t, g, r, false)
		})
	}
	for dim := 1; dim <= 5; dim++ {
		t.Run(fmt.Sprintf("hypercube%d", dim), func(t *testing.T) {
			tp, err := topo.Hypercube(dim, 2)
			g := dlGraph(t, tp, err)
			r, err := DOR{}.Route(context.Background(), g, Options{MaxVLs: 1})
			if err != nil {
				t.Fatal(err)
			}
			dlVerify(t, g, r, true)
			dlCheckMinimal(t, g, r, false)
		})
	}
}

// TestDORLMC routes a torus whose ports answer several LIDs each.
func TestDORLMC(t *testing.T) {
	tp, err := topo.Torus([]int{4, 3, 5}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := tp.Fabric.AssignLIDs(1); err != nil {
		t.Fatal(err)
	}
	g := dlFabricGraph(t, tp.Fabric)
	r, err := DOR{}.Route(context.Background(), g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dlVerify(t, g, r, true)
	dlCheckMinimal(t, g, r, false)
}

// dlAddCable returns a copy of f with one extra cable between switches a
// and b (node ids), each on a new port.
func dlAddCable(tb testing.TB, f *fabric.Fabric, a, b fabric.NodeID) *fabric.Fabric {
	tb.Helper()
	f = f.Clone()
	na, nb := &f.Nodes[a], &f.Nodes[b]
	na.Ports = append(na.Ports, fabric.Port{Peer: fabric.PortRef{Node: b, Port: uint8(len(nb.Ports))}, Width: topo.DefaultWidth, Speed: topo.DefaultSpeed})
	nb.Ports = append(nb.Ports, fabric.Port{Peer: fabric.PortRef{Node: a, Port: uint8(len(na.Ports) - 1)}, Width: topo.DefaultWidth, Speed: topo.DefaultSpeed})
	if err := f.Validate(); err != nil {
		tb.Fatal(err)
	}
	return f
}

// TestDORRefuses checks that DOR refuses what is not a complete mesh or
// torus with ErrNotApplicable and a precise reason.
func TestDORRefuses(t *testing.T) {
	fromTopo := func(tp *topo.Topology, err error) *fabric.Fabric {
		if err != nil {
			t.Fatal(err)
		}
		return tp.Fabric
	}
	torus := fromTopo(topo.Torus([]int{4, 4}, 1, false))
	linkFail, _, err := topo.InjectFailures(torus, topo.FailureSpec{Links: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	swFail, _, err := topo.InjectFailures(torus, topo.FailureSpec{Switches: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ring := fromTopo(topo.Ring(6, 1, nil))
	coordRing := fromTopo(topo.Torus([]int{6}, 1, false))
	sw := func(f *fabric.Fabric, i int) fabric.NodeID { return dlFabricGraph(t, f).Switches[i] }
	cases := []struct {
		name   string
		f      *fabric.Fabric
		params map[string]string
		want   string
	}{
		{"fattree", fromTopo(topo.FatTree(4, 1, 0)), nil, `switch "fattree L0" has no coordinates`},
		{"fattree-n3", fromTopo(topo.FatTree(2, 3, 0)), nil, `both have coordinates (0,0)`},
		{"clos", fromTopo(topo.Clos2(8)), nil, `switch "clos2 leaf0" has no coordinates`},
		{"random", fromTopo(topo.Random(12, 3, 1, 7)), nil, `switch "random sw0" has no coordinates`},
		{"ring-no-coords", ring, nil, `switch "ring r0" has no coordinates`},
		{"ring-shortcut-dims", fromTopo(topo.Ring(6, 1, []int{0, 3})), map[string]string{"dims": "6"}, `cable between (0) and (3)`},
		{"ring-shortcut-coords", dlAddCable(t, coordRing, sw(coordRing, 1), sw(coordRing, 4)), nil, `cable between (1) and (4) ("torus (1)" port 4) is not a neighbour link`},
		{"ring-as-grid", ring, map[string]string{"dims": "3x2"}, `cable between (0,0) and (2,1) ("ring r0" port 3) is not a neighbour link`},
		{"torus-link-failure", linkFail, nil, `missing: DOR cannot route around failures`},
		{"torus-switch-failure", swFail, nil, `missing from the 4x4 grid: DOR cannot route around failures`},
		{"fbfly", fromTopo(topo.FlattenedButterfly([]int{4, 4}, 1)), nil, `is not a neighbour link`},
		{"kautz", fromTopo(topo.Kautz(2, 3, 1)), nil, `switch "kautz 010" has no coordinates`},
		{"dims-too-small", torus, map[string]string{"dims": "4x3"}, `outside dims=4x3`},
		{"dims-count", torus, map[string]string{"dims": "16"}, `dims=16 gives 1 dimensions, switch "torus (0,0)" has 2 coordinates`},
		{"mesh-declared-torus", fromTopo(topo.Torus([]int{4, 4}, 1, true)), map[string]string{"torus": "1,0"}, `link (0,0)-(3,0) missing`},
		{"too-many-datelines", fromTopo(topo.Torus([]int{4, 4, 4, 4, 4}, 0, false)), nil, `5 wrapping dimensions`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := dlFabricGraph(t, c.f)
			_, err := routeParams(context.Background(), DOR{}, g, Options{}, c.params)
			if !errors.Is(err, ErrNotApplicable) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrNotApplicable with %q", err, c.want)
			}
			t.Log(err)
		})
	}
}

// TestDORParams covers the shape overrides and parameter errors.
func TestDORParams(t *testing.T) {
	ctx := context.Background()
	// A ring without coordinates, routed as a 1-D torus by dims.
	tp, err := topo.Ring(8, 2, nil)
	g := dlGraph(t, tp, err)
	r, err := routeParams(ctx, DOR{}, g, Options{}, map[string]string{"dims": "8"})
	if err != nil {
		t.Fatal(err)
	}
	if r.NumVLs != 2 {
		t.Fatalf("ring of 8: NumVLs %d", r.NumVLs)
	}
	dlVerify(t, g, r, true)
	dlCheckMinimal(t, g, r, false)

	// A torus routed as a mesh (wrap cables unused) or half a torus.
	tp, err = topo.Torus([]int{5, 4}, 1, false)
	g = dlGraph(t, tp, err)
	for _, c := range []struct {
		wrap string
		vls  int
	}{{"0,0", 1}, {"1,0", 2}, {"0,1", 2}, {"1,1", 2}} {
		r, err := routeParams(ctx, DOR{}, g, Options{}, map[string]string{"torus": c.wrap, "dims": "5x4"})
		if err != nil {
			t.Fatalf("torus=%s: %v", c.wrap, err)
		}
		if r.NumVLs != c.vls {
			t.Fatalf("torus=%s: NumVLs %d, want %d", c.wrap, r.NumVLs, c.vls)
		}
		dlVerify(t, g, r, true)
		dlCheckMinimal(t, g, r, c.wrap != "1,1")
	}

	bad := []struct {
		e      DOR
		params map[string]string
		want   string
	}{
		{DOR{}, map[string]string{"dateline": "off"}, `use engine "dor-nodateline"`},
		{DOR{NoDateline: true}, map[string]string{"dateline": "on"}, `use engine "dor"`},
		{DOR{}, map[string]string{"dateline": "maybe"}, `expected on or off`},
		{DOR{}, map[string]string{"dims": "5y4"}, `is not a size`},
		{DOR{}, map[string]string{"torus": "1,2"}, `expected 0 or 1`},
		{DOR{}, map[string]string{"torus": "1"}, `1 flags for 2 dimensions`},
		{DOR{}, map[string]string{"root": "x"}, `unknown parameter "root"`},
	}
	for _, c := range bad {
		_, err := routeParams(ctx, c.e, g, Options{}, c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrNotApplicable) {
			t.Errorf("%s %v: err = %v, want %q", c.e.Name(), c.params, err, c.want)
		}
	}
	if _, err := (DOR{}).Route(ctx, g, Options{MaxVLs: 99}); err == nil {
		t.Error("MaxVLs 99 accepted")
	}
	for _, p := range []string{"on"} {
		if _, err := routeParams(ctx, DOR{}, g, Options{}, map[string]string{"dateline": p}); err != nil {
			t.Errorf("dateline=%s: %v", p, err)
		}
	}
	if _, err := routeParams(ctx, DOR{NoDateline: true}, g, Options{}, map[string]string{"dateline": "off"}); err != nil {
		t.Errorf("dor-nodateline dateline=off: %v", err)
	}
}

// TestDORDeterministic: equal inputs give identical routings, whatever
// the number of workers.
func TestDORDeterministic(t *testing.T) {
	tp, err := topo.Torus([]int{6, 5, 4}, 2, false)
	g := dlGraph(t, tp, err)
	var first *lft.Routing
	for _, w := range []int{1, 4, 1, 3, 8} {
		r, err := DOR{}.Route(context.Background(), g, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = r
		} else if !lft.Equal(first, r) {
			t.Fatalf("routing with %d workers differs", w)
		}
	}
}

// TestDORCancel: a cancelled context stops the engine.
func TestDORCancel(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 1, false)
	g := dlGraph(t, tp, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (DOR{}).Route(ctx, g, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestDORLASHRegistered checks the registry entries and the chain: on a fat
// tree DOR refuses and the chain falls back to LASH.
func TestDORLASHRegistered(t *testing.T) {
	for name, safe := range map[string]bool{"dor": true, "dor-nodateline": false, "lash": true} {
		e, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() != name || e.DeadlockFree() != safe {
			t.Fatalf("%s: Name %q DeadlockFree %v", name, e.Name(), e.DeadlockFree())
		}
	}
	chain, err := ParseChain("dor,lash")
	if err != nil {
		t.Fatal(err)
	}
	tp, err := topo.FatTree(4, 2, 0)
	g := dlGraph(t, tp, err)
	res, err := RouteChain(context.Background(), g, chain, Options{})
	if err != nil || res.Routing.Engine != "lash" || len(res.Attempts) != 2 || !errors.Is(res.Attempts[0].Err, ErrNotApplicable) {
		t.Fatalf("chain: err %v, result %+v", err, res)
	}
	tp, err = topo.Torus([]int{4, 4, 4}, 1, false)
	g = dlGraph(t, tp, err)
	res, err = RouteChain(context.Background(), g, chain, Options{})
	if err != nil || res.Routing.Engine != "dor" || !res.Report.OK() {
		t.Fatalf("chain on a torus: %v", err)
	}
}

var dlBench struct {
	once sync.Once
	dor  *fabric.Graph // 8×8×8 torus, 1 host per switch
	lash *fabric.Graph // 4×4×4 torus, 1 host per switch
	err  error
}

func dlBenchGraphs(b *testing.B) {
	dlBench.once.Do(func() {
		for _, x := range []struct {
			dims []int
			g    **fabric.Graph
		}{{[]int{8, 8, 8}, &dlBench.dor}, {[]int{4, 4, 4}, &dlBench.lash}} {
			tp, err := topo.Torus(x.dims, 1, false)
			if err == nil {
				*x.g, err = fabric.Compile(tp.Fabric)
			}
			if err != nil {
				dlBench.err = err
			}
		}
	})
	if dlBench.err != nil {
		b.Fatal(dlBench.err)
	}
}

func BenchmarkDOR_Torus8x8x8(b *testing.B) {
	dlBenchGraphs(b)
	for b.Loop() {
		if _, err := (DOR{}).Route(context.Background(), dlBench.dor, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
