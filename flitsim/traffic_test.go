package flitsim

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// TestPermutations checks the fixed destination tables.
func TestPermutations(t *testing.T) {
	n := network(t, torus(t, 4, "dor"), Config{})
	N := int32(n.NumNodes())
	w, err := compile(n, Traffic{Pattern: Permutation, Load: 1}.withDefaults(), 5)
	if err != nil {
		t.Fatal(err)
	}
	// One cycle through all nodes: a derangement, every node hit once.
	x, steps := int32(0), 0
	for {
		x = w.perm[x]
		steps++
		if x == 0 {
			break
		}
	}
	if steps != int(N) || w.sources != int(N) {
		t.Errorf("permutation cycle of %d steps, %d sources; want %d", steps, w.sources, N)
	}
	w, _ = compile(n, Traffic{Pattern: BitReversal, Load: 1}.withDefaults(), 5)
	for i, d := range map[int32]int32{1: 8, 2: 4, 3: 12, 7: 14, 11: 13} {
		if w.perm[i] != d {
			t.Errorf("bit reversal of %d = %d, want %d", i, w.perm[i], d)
		}
	}
	if w.perm[0] != -1 || w.perm[6] != -1 || w.active[9] {
		t.Errorf("palindromes 0, 6, 9 must be idle")
	}
	w, _ = compile(n, Traffic{Pattern: Transpose, Load: 1}.withDefaults(), 5)
	for i, d := range map[int32]int32{1: 4, 2: 8, 7: 13, 14: 11} {
		if w.perm[i] != d {
			t.Errorf("transpose of %d = %d, want %d", i, w.perm[i], d)
		}
	}
	if w.sources != 12 {
		t.Errorf("transpose: %d sources, want 12 (the diagonal is idle)", w.sources)
	}
	if _, err := compile(network(t, ring5(t, "minhop"), Config{}), Traffic{Pattern: BitReversal, Load: 1}.withDefaults(), 1); err == nil {
		t.Error("bit reversal on 5 nodes accepted")
	}
}

// TestDestinations draws many destinations per pattern and checks where
// they go.
func TestDestinations(t *testing.T) {
	tor := network(t, torus(t, 4, "dor"), Config{})
	df := routed(t, "dragonfly", func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 9) }, "nue", 4)
	dfn := network(t, df, Config{})
	rng := rand.New(rand.NewPCG(1, 2))
	const draws = 4000

	// Nearest neighbours on a torus: nodes on the four adjacent switches.
	w, err := compile(tor, Traffic{Pattern: Neighbor, Load: 1}.withDefaults(), 1)
	if err != nil {
		t.Fatal(err)
	}
	g := tor.Graph()
	dist, queue := make([]int32, g.NumSwitches()), make([]int32, g.NumSwitches())
	for src := int32(0); src < 16; src++ {
		g.BFS(tor.NodeSwitch(src), dist, queue)
		for k := 0; k < 50; k++ {
			d, _ := w.dest(src, rng)
			if dist[tor.NodeSwitch(d)] != 1 {
				t.Fatalf("neighbour of %d is %d at distance %d", src, d, dist[tor.NodeSwitch(d)])
			}
		}
	}

	// Hot spot: the fraction to the hot node.
	w, _ = compile(tor, Traffic{Pattern: HotSpot, Load: 1, HotNode: 9, HotFraction: 0.25}.withDefaults(), 1)
	hot := 0
	for k := 0; k < draws; k++ {
		if d, c := w.dest(3, rng); d == 9 && c == 1 {
			hot++
		}
	}
	if f := float64(hot) / draws; math.Abs(f-0.25) > 0.03 {
		t.Errorf("hot spot fraction %.3f", f)
	}

	// Dragonfly adversarial: always into the next group.
	grp := df.topo.Group
	w, err = compile(dfn, Traffic{Pattern: NextGroup, Load: 1, Groups: grp}.withDefaults(), 1)
	if err != nil {
		t.Fatal(err)
	}
	G := 9
	for src := int32(0); src < int32(dfn.NumNodes()); src++ {
		d, _ := w.dest(src, rng)
		if gs, gd := grp[dfn.NodeSwitch(src)], grp[dfn.NodeSwitch(d)]; gd != (gs+1)%G {
			t.Fatalf("node %d of group %d sends to group %d", src, gs, gd)
		}
	}

	// RSI-style group hot spot: only group 2 sends, always to group 5.
	w, _ = compile(dfn, Traffic{Pattern: GroupHotSpot, Load: 1, Groups: grp, SrcGroup: 2, DstGroup: 5}.withDefaults(), 1)
	for src := int32(0); src < int32(dfn.NumNodes()); src++ {
		if w.active[src] != (grp[dfn.NodeSwitch(src)] == 2) {
			t.Fatalf("node %d of group %d active = %v", src, grp[dfn.NodeSwitch(src)], w.active[src])
		}
		if w.active[src] {
			if d, _ := w.dest(src, rng); grp[dfn.NodeSwitch(d)] != 5 {
				t.Fatalf("group hot spot sends to group %d", grp[dfn.NodeSwitch(d)])
			}
		}
	}

	// Compute/I-O: I/O messages to the node's own I/O node, compute
	// messages never to an I/O node.
	io := ioNodes(16, 4)
	w, _ = compile(tor, Traffic{Pattern: IO, Load: 1, IONode: io, IORatio: 0.4}.withDefaults(), 1)
	nio := 0
	for k := 0; k < draws; k++ {
		d, c := w.dest(6, rng)
		switch {
		case c == 1 && d != io[6]:
			t.Fatalf("I/O message to %d, want %d", d, io[6])
		case c == 0 && (io[d] < 0 || d == 6):
			t.Fatalf("compute message to %d", d)
		}
		nio += int(c)
	}
	if f := float64(nio) / draws; math.Abs(f-0.4) > 0.03 {
		t.Errorf("I/O ratio %.3f, want 0.4", f)
	}
	if w.active[0] || w.sources != 12 {
		t.Errorf("I/O nodes must be idle: %d sources", w.sources)
	}
}

// TestArrivalProcesses: each process offers the requested load on
// average, and the offered load is what the run measures.
func TestArrivalProcesses(t *testing.T) {
	n := network(t, fatTree(t, "ftree"), Config{})
	for _, a := range []Arrival{Bernoulli, Exponential, Weibull} {
		for _, load := range []float64{0.1, 0.4} {
			tr := Traffic{Pattern: Uniform, Load: load, Arrival: a, WeibullShape: 0.7, MessagePackets: 2}
			res, err := n.Run(context.Background(), tr, RunOptions{Seed: 4, Warmup: 1000, Measure: 40000})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(res.OfferedFraction-load) > 0.06*load {
				t.Errorf("%s at %.2f: offered %.4f", a, load, res.OfferedFraction)
			}
			if math.Abs(res.AcceptedFraction-res.OfferedFraction) > 0.06*load {
				t.Errorf("%s at %.2f: accepted %.4f of %.4f offered", a, load, res.AcceptedFraction, res.OfferedFraction)
			}
		}
	}
	// Bernoulli gaps are geometric with the right mean.
	ia := newInterArrival(Bernoulli, 0.2, 1)
	rng := rand.New(rand.NewPCG(3, 3))
	sum := 0.0
	for k := 0; k < 20000; k++ {
		g := ia.gap(rng)
		if g < 1 || g != math.Floor(g) {
			t.Fatalf("Bernoulli gap %g", g)
		}
		sum += g
	}
	if m := sum / 20000; math.Abs(m-5) > 0.15 {
		t.Errorf("Bernoulli mean gap %.3f, want 5", m)
	}
}

// TestClassesAndVLArbitration: compute traffic on VLs 0-1, I/O traffic
// shifted to VLs 2-3. Giving the compute VLs high priority lowers the
// compute latency against the same run with the priorities swapped, and
// both classes are reported on their own VLs.
func TestClassesAndVLArbitration(t *testing.T) {
	f := torus(t, 4, "dor")
	hi, lo := []VLWeight{{VL: 0, Weight: 32}, {VL: 1, Weight: 32}}, []VLWeight{{VL: 2, Weight: 32}, {VL: 3, Weight: 32}}
	tr := Traffic{Pattern: IO, Load: 0.45, IONode: ioNodes(16, 4), IORatio: 0.5,
		Classes: []Class{{Name: "compute", MessagePackets: 1}, {Name: "io", MessagePackets: 4, VLOffset: 2}}}
	run := func(arb *VLArbitration) *Result {
		n := network(t, f, Config{VLs: 4, VLArb: arb, PacketFlits: 8})
		res, err := n.Run(context.Background(), tr, RunOptions{Seed: 2, Measure: 20000})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Classes) != 2 || res.Classes[0].Latency.Count == 0 || res.Classes[1].Latency.Count == 0 {
			t.Fatalf("classes %+v", res.Classes)
		}
		if res.VLStats[2].MaxFlits == 0 || res.VLStats[0].MaxFlits == 0 {
			t.Errorf("VL use %+v: classes not on their VLs", res.VLStats)
		}
		return res
	}
	fav := run(&VLArbitration{High: hi, Low: lo, HighLimit: 255})
	unfav := run(&VLArbitration{High: lo, Low: hi, HighLimit: 255})
	c1, c2 := fav.Classes[0].Latency, unfav.Classes[0].Latency
	t.Logf("compute latency %.1f (p99 %d) with priority, %.1f (p99 %d) without", c1.Mean, c1.P99, c2.Mean, c2.P99)
	if c1.Mean >= c2.Mean || c1.P99 >= c2.P99 {
		t.Errorf("priority does not help the compute class: %.1f/%d vs %.1f/%d", c1.Mean, c1.P99, c2.Mean, c2.P99)
	}
	// A VL offset beyond the simulated VLs is refused.
	tr.Classes[1].VLOffset = 3
	n := network(t, f, Config{VLs: 4})
	if _, err := n.Run(context.Background(), tr, RunOptions{}); err == nil {
		t.Error("VL offset 3 with 4 VLs and a 2-VL routing accepted")
	}
}

// TestUniformAndShiftDestinations: uniform destinations are never the
// source and spread evenly (a chi-square test over all ordered pairs), and
// hot-spot background traffic is uniform too; the shift exchange sends
// node i's k-th message to (i+k) mod N, one message per ordered pair.
func TestUniformAndShiftDestinations(t *testing.T) {
	n := network(t, torus(t, 4, "dor"), Config{})
	N := int32(n.NumNodes())
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tr := range []Traffic{{Pattern: Uniform, Load: 1}, {Pattern: HotSpot, Load: 1, HotNode: 2, HotFraction: 0.2}} {
		w, err := compile(n, tr.withDefaults(), 1)
		if err != nil {
			t.Fatal(err)
		}
		const per = 3000 // draws per source
		count := make([]int, N*N)
		for src := int32(0); src < N; src++ {
			for k := 0; k < per; k++ {
				d, class := w.dest(src, rng)
				if d == src || d < 0 || d >= N {
					t.Fatalf("%s: %d sends to %d", tr.Pattern, src, d)
				}
				if class == 0 {
					count[src*N+d]++
				}
			}
		}
		// Chi-square over each source's background destinations, 15
		// degrees of freedom per source: the sum over 16 sources has 240,
		// mean 240, sd ~22; 340 is beyond 4.5 sd.
		chi := 0.0
		for src := int32(0); src < N; src++ {
			tot := 0
			for d := int32(0); d < N; d++ {
				tot += count[src*N+d]
			}
			exp := float64(tot) / float64(N-1)
			for d := int32(0); d < N; d++ {
				if d != src {
					x := float64(count[src*N+d]) - exp
					chi += x * x / exp
				}
			}
		}
		if chi > 340 {
			t.Errorf("%s: chi-square %.1f over 240 degrees of freedom: not uniform", tr.Pattern, chi)
		}
		t.Logf("%s: chi-square %.1f (240 degrees of freedom)", tr.Pattern, chi)
	}

	// Shift: record the destination of every delivered message.
	got := make([]int32, N*N)
	for i := range got {
		got[i] = -1
	}
	_, err := n.Run(context.Background(), Traffic{Pattern: Shift}, RunOptions{OnDeliver: func(d Delivery) {
		k := int32(d.Seq) + 1 // one packet per message: packet k-1 is phase k
		if got[d.Src*N+k] >= 0 {
			t.Errorf("node %d sent two phase-%d messages", d.Src, k)
		}
		got[d.Src*N+k] = d.Dst
	}})
	if err != nil {
		t.Fatal(err)
	}
	for src := int32(0); src < N; src++ {
		for k := int32(1); k < N; k++ {
			if d := got[src*N+k]; d != (src+k)%N {
				t.Errorf("shift: node %d phase %d went to %d, want %d", src, k, d, (src+k)%N)
			}
		}
	}
}
