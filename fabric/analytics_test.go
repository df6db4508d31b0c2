package fabric_test

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/graph/path"
	"gonum.org/v1/gonum/graph/simple"
	"gonum.org/v1/gonum/graph/topo"

	"github.com/nuesm/nuesm/fabric"
)

// oracle holds all-pairs switch distances computed by gonum.
type oracle struct {
	sw    []fabric.NodeID // switch index -> node id
	dist  [][]float64     // +Inf where unreachable
	comps int             // connected components of the switch graph
	terms []int           // switch index of every terminal attached to a switch
}

// newOracle builds a gonum graph of the switches (loopbacks left out,
// parallel cables merged) and runs Floyd–Warshall on it.
func newOracle(t *testing.T, f *fabric.Fabric) *oracle {
	t.Helper()
	o := &oracle{}
	idx := map[fabric.NodeID]int64{}
	g := simple.NewUndirectedGraph()
	for i := range f.Nodes {
		if f.Nodes[i].Kind == fabric.Switch {
			idx[fabric.NodeID(i)] = int64(len(o.sw))
			g.AddNode(simple.Node(len(o.sw)))
			o.sw = append(o.sw, fabric.NodeID(i))
		}
	}
	for _, l := range f.Links() {
		a, aok := idx[l.A.Node]
		b, bok := idx[l.B.Node]
		switch {
		case aok && bok && a != b:
			if !g.HasEdgeBetween(a, b) {
				g.SetEdge(simple.Edge{F: simple.Node(a), T: simple.Node(b)})
			}
		case aok && !bok:
			o.terms = append(o.terms, int(a))
		case bok && !aok:
			o.terms = append(o.terms, int(b))
		}
	}
	paths, ok := path.FloydWarshall(g)
	if !ok {
		t.Fatal("gonum: negative cycle")
	}
	S := len(o.sw)
	o.dist = make([][]float64, S)
	for i := range o.dist {
		o.dist[i] = make([]float64, S)
		for j := range o.dist[i] {
			o.dist[i][j] = paths.Weight(int64(i), int64(j))
		}
	}
	o.comps = len(topo.ConnectedComponents(g))
	return o
}

// stats computes HopStats straight from their definitions.
func (o *oracle) stats() fabric.HopStats {
	S := len(o.sw)
	st := fabric.HopStats{Switches: S, Terminals: len(o.terms), Connected: o.comps <= 1}
	hasCA := make([]bool, S)
	for _, s := range o.terms {
		hasCA[s] = true
	}
	for _, h := range hasCA {
		if h {
			st.CASwitches++
		}
	}
	var swSum, swPairs int64
	for i := 0; i < S; i++ {
		for j := 0; j < S; j++ {
			d := o.dist[i][j]
			if math.IsInf(d, 1) {
				continue
			}
			st.Diameter = max(st.Diameter, int(d))
			if hasCA[i] && hasCA[j] {
				st.CADiameter = max(st.CADiameter, int(d))
				if i != j {
					swSum += int64(d)
					swPairs++
				}
			}
		}
	}
	if swPairs > 0 {
		st.AvgSwitchHops = float64(swSum) / float64(swPairs)
	}
	var termSum, termPairs int64
	for a, sa := range o.terms {
		for b, sb := range o.terms {
			if a == b {
				continue
			}
			d := o.dist[sa][sb]
			if math.IsInf(d, 1) {
				st.Unreachable++
				continue
			}
			termSum += int64(d)
			termPairs++
		}
	}
	if termPairs > 0 {
		st.AvgTermHops = float64(termSum) / float64(termPairs)
	}
	return st
}

func TestHopsAgainstGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 11))
	var connected, disconnected, unreachable int
	for trial := 0; trial < 250; trial++ {
		o := randOpts{maxSwitches: 30, edgeProb: 0.02 + 0.3*r.Float64(), maxHosts: 3, extras: trial%2 == 0}
		f := randomFabric(t, r, o)
		g := mustCompile(t, f)
		or := newOracle(t, f)
		want := or.stats()
		got := g.Hops()
		if got != want {
			t.Fatalf("trial %d (%d switches): Hops\n got %+v\nwant %+v", trial, g.NumSwitches(), got, want)
		}
		if got.Connected {
			connected++
		} else {
			disconnected++
		}
		if got.Unreachable > 0 {
			unreachable++
		}
		// BFS from every switch matches the oracle's distances, and
		// SwitchComponents labels with the lowest switch each reaches.
		S := g.NumSwitches()
		dist, queue := make([]int32, S), make([]int32, S)
		comp := g.SwitchComponents()
		for s := 0; s < S; s++ {
			low := slices.IndexFunc(or.dist[s][:S], func(d float64) bool { return !math.IsInf(d, 1) })
			if comp[s] != int32(low) {
				t.Fatalf("trial %d: SwitchComponents()[%d] = %d, want %d", trial, s, comp[s], low)
			}
			q := queue
			if s%2 == 1 {
				q = nil // BFS allocates its own scratch
			}
			g.BFS(int32(s), dist, q)
			for d := 0; d < S; d++ {
				w := or.dist[s][d]
				if (math.IsInf(w, 1) && dist[d] != -1) || (!math.IsInf(w, 1) && float64(dist[d]) != w) {
					t.Fatalf("trial %d: BFS(%d)[%d] = %d, oracle %v", trial, s, d, dist[d], w)
				}
			}
		}
	}
	if connected < 20 || disconnected < 20 || unreachable < 20 {
		t.Errorf("weak sample: %d connected, %d disconnected, %d with unreachable pairs", connected, disconnected, unreachable)
	}
}

func TestHopsIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewPCG(5, 5))
	for trial := 0; trial < 20; trial++ {
		f := randomFabric(t, r, randOpts{maxSwitches: 80, edgeProb: 0.01 + 0.08*r.Float64(), maxHosts: 4, extras: true})
		g := mustCompile(t, f)
		var first fabric.HopStats
		for i, procs := range []int{1, 4, 3, 16} {
			runtime.GOMAXPROCS(procs)
			st := g.Hops()
			if i == 0 {
				first = st
				continue
			}
			if st != first {
				t.Fatalf("trial %d: GOMAXPROCS %d: %+v, GOMAXPROCS 1: %+v", trial, procs, st, first)
			}
		}
	}
}

func TestHopsSmall(t *testing.T) {
	// graphFabric: a triangle s0-s1-s2 with terminals on every switch; the
	// CA pair c0-c1 is not attached to a switch and does not count.
	g := mustCompile(t, graphFabric(t, true))
	want := fabric.HopStats{
		Switches: 3, CASwitches: 3, Terminals: 5, Connected: true,
		Diameter: 1, CADiameter: 1, AvgSwitchHops: 1,
		// 20 ordered terminal pairs; same-switch pairs (h0,h2.1) and
		// (h1,h2.2) are 0 hops both ways, the other 16 are 1 hop.
		AvgTermHops: 16.0 / 20,
	}
	if got := g.Hops(); got != want {
		t.Fatalf("Hops = %+v, want %+v", got, want)
	}
}

func TestLinkCounts(t *testing.T) {
	b := fabric.NewBuilder()
	s0 := mustAdd(t, b, fabric.Switch, 0x10, 8, "s0")
	s1 := mustAdd(t, b, fabric.Switch, 0x11, 8, "s1")
	h0 := mustAdd(t, b, fabric.CA, 0x20, 1, "h0")
	h1 := mustAdd(t, b, fabric.CA, 0x21, 1, "h1")
	h2 := mustAdd(t, b, fabric.CA, 0x22, 1, "h2")
	r0 := mustAdd(t, b, fabric.Router, 0x30, 1, "r0")
	c0 := mustAdd(t, b, fabric.CA, 0x40, 1, "c0")
	c1 := mustAdd(t, b, fabric.CA, 0x41, 1, "c1")
	f := b.Fabric()
	cable := func(a, c fabric.PortRef, wa, wc fabric.Width, sa, sc fabric.Speed) {
		t.Helper()
		if f.Port(a).Cabled() {
			t.Fatalf("%v already cabled", a)
		}
		f.Port(a).Peer, f.Port(c).Peer = c, a
		f.Port(a).Width, f.Port(c).Width = wa, wc
		f.Port(a).Speed, f.Port(c).Speed = sa, sc
	}
	w4, w1, w2, w12 := fabric.Width4x, fabric.Width1x, fabric.Width2x, fabric.Width12x
	cable(pr(s0, 1), pr(s1, 1), w4, w4, fabric.EDR, fabric.EDR)
	cable(pr(s0, 2), pr(s1, 2), w4, w4, fabric.HDR, fabric.EDR) // counts as EDR
	cable(pr(s0, 3), pr(s1, 3), w4, w2, fabric.EDR, fabric.EDR) // counts as 2x
	cable(pr(s1, 5), pr(s1, 6), w4, w4, fabric.EDR, fabric.EDR) // loopback counts too
	cable(pr(h0, 1), pr(s0, 4), w4, w4, fabric.HDR, fabric.HDR)
	cable(pr(s1, 4), pr(h1, 1), w4, w1, fabric.HDR, fabric.HDR)
	cable(pr(h2, 1), pr(s0, 6), fabric.WidthUnknown, w4, fabric.HDR, fabric.HDR) // unknown is the lowest
	cable(pr(r0, 1), pr(s0, 5), w12, w12, fabric.NDR, fabric.NDR)
	cable(pr(c1, 1), pr(c0, 1), w4, w4, fabric.EDR, fabric.EDR)
	mustValid(t, f)
	want := []fabric.LinkClass{
		{Ends: "switch-switch", Width: w2, Speed: fabric.EDR, Count: 1},
		{Ends: "switch-switch", Width: w4, Speed: fabric.EDR, Count: 3},
		{Ends: "switch-router", Width: w12, Speed: fabric.NDR, Count: 1},
		{Ends: "switch-CA", Width: fabric.WidthUnknown, Speed: fabric.HDR, Count: 1},
		{Ends: "switch-CA", Width: w1, Speed: fabric.HDR, Count: 1},
		{Ends: "switch-CA", Width: w4, Speed: fabric.HDR, Count: 1},
		{Ends: "CA-CA", Width: w4, Speed: fabric.EDR, Count: 1},
	}
	if got := f.LinkCounts(); !slices.Equal(got, want) {
		t.Fatalf("LinkCounts =\n%v\nwant\n%v", got, want)
	}
	if got := fabric.NewBuilder().Fabric().LinkCounts(); len(got) != 0 {
		t.Fatalf("empty fabric: %v", got)
	}
}

func TestComponents(t *testing.T) {
	b := fabric.NewBuilder()
	c0 := mustAdd(t, b, fabric.CA, 0x40, 1, "c0")     // 0
	s0 := mustAdd(t, b, fabric.Switch, 0x10, 8, "s0") // 1
	h3 := mustAdd(t, b, fabric.CA, 0x23, 1, "h3")     // 2, isolated
	s2 := mustAdd(t, b, fabric.Switch, 0x12, 8, "s2") // 3
	s1 := mustAdd(t, b, fabric.Switch, 0x11, 8, "s1") // 4
	h0 := mustAdd(t, b, fabric.CA, 0x20, 1, "h0")     // 5
	c1 := mustAdd(t, b, fabric.CA, 0x41, 1, "c1")     // 6
	h2 := mustAdd(t, b, fabric.CA, 0x22, 1, "h2")     // 7
	h1 := mustAdd(t, b, fabric.CA, 0x21, 1, "h1")     // 8
	s3 := mustAdd(t, b, fabric.Switch, 0x13, 8, "s3") // 9, isolated
	r0 := mustAdd(t, b, fabric.Router, 0x30, 2, "r0") // 10
	mustConnect(t, b, s0, 1, s1, 1)
	mustConnect(t, b, s0, 2, s1, 2)
	mustConnect(t, b, s1, 3, s1, 4) // loopback
	mustConnect(t, b, h0, 1, s0, 3)
	mustConnect(t, b, h1, 1, s1, 5)
	mustConnect(t, b, c0, 1, c1, 1)
	mustConnect(t, b, h2, 1, s2, 1)
	mustConnect(t, b, r0, 1, s2, 2)
	mustConnect(t, b, r0, 2, s0, 4) // a router joins s2's part to s0's
	_ = h3
	_ = s3
	f := b.Fabric()
	mustValid(t, f)
	want := [][]fabric.NodeID{{1, 3, 4, 5, 7, 8, 10}, {0, 6}, {2}, {9}}
	got := f.Components()
	if len(got) != len(want) {
		t.Fatalf("Components = %v, want %v", got, want)
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("Components = %v, want %v", got, want)
		}
	}
	// Without the router cable, s2's part (3 nodes) splits off; the CA
	// pair (2 nodes) comes after it, and ties go to the lowest node id.
	f.Nodes[r0].Ports[2].Peer, f.Nodes[s0].Ports[4].Peer = fabric.NoPeer, fabric.NoPeer
	want = [][]fabric.NodeID{{1, 4, 5, 8}, {3, 7, 10}, {0, 6}, {2}, {9}}
	got = f.Components()
	for i := range want {
		if i >= len(got) || !slices.Equal(got[i], want[i]) {
			t.Fatalf("Components = %v, want %v", got, want)
		}
	}
	if len(fabric.NewBuilder().Fabric().Components()) != 0 {
		t.Fatal("empty fabric has components")
	}
}

// torusFabric builds an x*y*z torus of switches with hosts CAs each, LIDs
// assigned: the benchmark fixture.
func torusFabric(tb testing.TB, x, y, z, hosts int) *fabric.Fabric {
	tb.Helper()
	b := fabric.NewBuilder()
	n := x * y * z
	id := func(i, j, k int) fabric.NodeID { return fabric.NodeID(((i+x)%x*y+(j+y)%y)*z + (k+z)%z) }
	for i := 0; i < n; i++ {
		mustAdd(tb, b, fabric.Switch, 0x1000+uint64(i), 6+hosts, "")
	}
	// Port 2d+1 leads to the + neighbour in dimension d, port 2d+2 to the
	// - neighbour.
	for i := 0; i < x; i++ {
		for j := 0; j < y; j++ {
			for k := 0; k < z; k++ {
				me := id(i, j, k)
				mustConnect(tb, b, me, 1, id(i+1, j, k), 2)
				mustConnect(tb, b, me, 3, id(i, j+1, k), 4)
				mustConnect(tb, b, me, 5, id(i, j, k+1), 6)
			}
		}
	}
	guid := uint64(0x100000000)
	for s := 0; s < n; s++ {
		for h := 0; h < hosts; h++ {
			guid += 2
			ca := mustAdd(tb, b, fabric.CA, guid, 1, "")
			b.Node(ca).Ports[1].GUID = guid + 1
			mustConnect(tb, b, ca, 1, fabric.NodeID(s), uint8(7+h))
		}
	}
	f := b.Fabric()
	if err := f.AssignLIDs(0); err != nil {
		tb.Fatal(err)
	}
	return f
}

func TestTorusFixture(t *testing.T) {
	g := mustCompile(t, torusFabric(t, 4, 3, 5, 2))
	st := g.Hops()
	want := fabric.HopStats{Switches: 60, CASwitches: 60, Terminals: 120, Connected: true, Diameter: 2 + 1 + 2, CADiameter: 5}
	st.AvgSwitchHops, st.AvgTermHops = 0, 0
	if st != want || g.NumChannels() != 6*60 {
		t.Fatalf("torus 4x3x5: %+v, %d channels", st, g.NumChannels())
	}
}

// benchTorus is the ~2,000-switch benchmark fixture: a 12x12x14 torus
// (2,016 switches, 6,048 cables) with 4 hosts per switch.
func benchTorus(b *testing.B) *fabric.Fabric {
	b.Helper()
	benchOnce.Do(func() { benchFab = torusFabric(b, 12, 12, 14, 4) })
	return benchFab
}

var (
	benchOnce sync.Once
	benchFab  *fabric.Fabric
)

func BenchmarkCompile(b *testing.B) {
	f := benchTorus(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fabric.Compile(f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHops(b *testing.B) {
	g := mustCompile(b, benchTorus(b))
	b.ReportAllocs()
	for b.Loop() {
		if st := g.Hops(); !st.Connected {
			b.Fatal("torus not connected")
		}
	}
}

// TestComponentsWithin compares the labels of the switch graph cut down to
// a random subset of switches with a union-find over the channels whose
// ends are both in it.
func TestComponentsWithin(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 3))
	for trial := 0; trial < 200; trial++ {
		g := mustCompile(t, randomFabric(t, r, randOpts{maxSwitches: 30, edgeProb: 0.05 + 0.2*r.Float64(), extras: trial%2 == 0}))
		S := g.NumSwitches()
		in := make([]bool, S)
		for s := range in {
			in[s] = r.IntN(3) > 0
		}
		parent := make([]int32, S)
		for s := range parent {
			parent[s] = int32(s)
		}
		var find func(s int32) int32
		find = func(s int32) int32 {
			if parent[s] != s {
				parent[s] = find(parent[s])
			}
			return parent[s]
		}
		for c := range g.Head {
			if a, b := g.Tail[c], g.Head[c]; in[a] && in[b] {
				ra, rb := find(a), find(b)
				parent[max(ra, rb)] = min(ra, rb) // the root is the lowest switch
			}
		}
		got := g.ComponentsWithin(func(s int32) bool { return in[s] })
		for s := int32(0); int(s) < S; s++ {
			want := int32(-1)
			if in[s] {
				want = find(s)
			}
			if got[s] != want {
				t.Fatalf("trial %d: ComponentsWithin[%d] = %d, want %d (in %v)", trial, s, got[s], want, in)
			}
		}
	}
}
