package flitsim

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// TestGroupLocal: super-node-local traffic stays in the source's group,
// never targets the source, reaches every other member about equally
// often, leaves nodes alone in their group idle, and the simulator and
// the bound see the same destinations.
func TestGroupLocal(t *testing.T) {
	df := routed(t, "dragonfly", func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 9) }, "nue", 4)
	n := network(t, df, Config{})
	grp := df.topo.Group
	groupOf := func(i int32) int { return grp[n.NodeSwitch(i)] }
	members := map[int][]int32{}
	for i := int32(0); i < int32(n.NumNodes()); i++ {
		members[groupOf(i)] = append(members[groupOf(i)], i)
	}
	w, err := compile(n, Traffic{Pattern: GroupLocal, Load: 1, Groups: grp}.withDefaults(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if w.sources != n.NumNodes() {
		t.Fatalf("%d sources, want all %d", w.sources, n.NumNodes())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, src := range []int32{0, 5, int32(n.NumNodes() - 1)} {
		m := members[groupOf(src)]
		count := map[int32]int{}
		const draws = 7000
		for k := 0; k < draws; k++ {
			d, c := w.dest(src, rng)
			if d == src || groupOf(d) != groupOf(src) || c != 0 {
				t.Fatalf("node %d (group %d) sends to %d (group %d), class %d", src, groupOf(src), d, groupOf(d), c)
			}
			count[d]++
		}
		if len(count) != len(m)-1 {
			t.Fatalf("node %d reaches %d of the %d other members", src, len(count), len(m)-1)
		}
		want := float64(draws) / float64(len(m)-1)
		for d, c := range count {
			if math.Abs(float64(c)-want) > 0.2*want {
				t.Errorf("node %d -> %d drawn %d times, want about %.0f", src, d, c, want)
			}
		}
		sum := 0.0
		w.dist(src, func(d int32, f float64) {
			if d == src || groupOf(d) != groupOf(src) {
				t.Fatalf("bound: %d -> %d outside the group", src, d)
			}
			sum += f
		})
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("bound fractions of %d sum to %g", src, sum)
		}
	}

	// A run delivers only group-local packets.
	opt := RunOptions{Seed: 2, Warmup: 200, Measure: 1000}
	bad, delivered := 0, 0
	opt.OnDeliver = func(d Delivery) {
		delivered++
		if groupOf(d.Src) != groupOf(d.Dst) || d.Src == d.Dst {
			bad++
		}
	}
	if _, err := n.Run(context.Background(), Traffic{Pattern: GroupLocal, Load: 0.3, Groups: grp}, opt); err != nil {
		t.Fatal(err)
	}
	if delivered == 0 || bad > 0 {
		t.Fatalf("%d packets delivered, %d outside their group", delivered, bad)
	}

	// A node alone in its group is idle (torus, one node per switch:
	// switch 0 in a group of its own).
	tor := network(t, torus(t, 4, "dor"), Config{})
	solo := make([]int, tor.Graph().NumSwitches())
	for s := 1; s < len(solo); s++ {
		solo[s] = 1
	}
	w, err = compile(tor, Traffic{Pattern: GroupLocal, Load: 1, Groups: solo}.withDefaults(), 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < int32(tor.NumNodes()); i++ {
		if want := tor.NodeSwitch(i) != 0; w.active[i] != want {
			t.Errorf("node %d on switch %d active = %v", i, tor.NodeSwitch(i), w.active[i])
		}
	}
	// No groups at all is an error.
	if _, err := n.Run(context.Background(), Traffic{Pattern: GroupLocal, Load: 0.3}, opt); !errors.Is(err, ErrConfig) {
		t.Errorf("group-local without groups: %v", err)
	}
	if p, err := ParsePattern("snlocal"); err != nil || p != GroupLocal || p.String() != "grouplocal" {
		t.Errorf("ParsePattern(snlocal) = %v, %v", p, err)
	}
}

// TestIONodesBySwitch: a per-switch assignment becomes per-node I/O
// targets (host h to host h of the serving switch), I/O and failed
// switches' nodes are idle, bad assignments are errors, and a run sends
// every I/O message to the assigned node.
func TestIONodesBySwitch(t *testing.T) {
	f := routed(t, "torus4x4h2", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 2, false) }, "dor", 4)
	n := network(t, f, Config{})
	S := f.g.NumSwitches()
	serve := make([]int, S)
	for s := range serve {
		serve[s] = 0 // switch 0 serves everybody ...
		if s >= S/2 {
			serve[s] = 10 // ... in the lower half, switch 10 the upper half
		}
	}
	serve[10], serve[5] = 10, -1 // 10 is an I/O switch, 5 a failed one
	io, err := n.IONodesBySwitch(serve)
	if err != nil {
		t.Fatal(err)
	}
	nodesOf := map[int32][]int32{}
	for i := int32(0); i < int32(n.NumNodes()); i++ {
		nodesOf[n.NodeSwitch(i)] = append(nodesOf[n.NodeSwitch(i)], i)
	}
	for s, nodes := range nodesOf {
		for h, i := range nodes {
			want := int32(-1)
			if t := serve[s]; t >= 0 && t != int(s) {
				want = nodesOf[int32(t)][h]
			}
			if io[i] != want {
				t.Fatalf("node %d (host %d of switch %d) has I/O node %d, want %d", i, h, s, io[i], want)
			}
		}
	}
	for _, bad := range [][]int{
		serve[:S-1], // too short
		append(append([]int(nil), serve[:S-1]...), S),  // out of range
		append(append([]int(nil), serve[:S-1]...), 3),  // served by a compute switch
		append(append([]int(nil), serve[:S-1]...), -2), // no such role
	} {
		if _, err := n.IONodesBySwitch(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("assignment %v: error %v", bad, err)
		}
	}

	opt := RunOptions{Seed: 1, Warmup: 200, Measure: 1000}
	ios := 0
	opt.OnDeliver = func(d Delivery) {
		if io[d.Src] < 0 {
			t.Fatalf("idle node %d sent", d.Src)
		}
		if d.Class == 1 {
			ios++
			if d.Dst != io[d.Src] {
				t.Fatalf("I/O packet %d -> %d, assigned %d", d.Src, d.Dst, io[d.Src])
			}
		}
	}
	tr := Traffic{Pattern: IO, Load: 0.2, IONode: io, IORatio: 0.3}
	if _, err := n.Run(context.Background(), tr, opt); err != nil {
		t.Fatal(err)
	}
	if ios == 0 {
		t.Fatal("no I/O packet delivered")
	}
}
