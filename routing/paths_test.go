package routing

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

func blEngines() []Engine { return []Engine{MinHop{}, UpDn{}, Ftree{}} }

// TestBaselineDeterministic routes twice with 1, 2 and 4 workers and
// expects byte-identical routings.
func TestBaselineDeterministic(t *testing.T) {
	for _, c := range blCases() {
		g := c.graph(t)
		for _, e := range blEngines() {
			ref, err := e.Route(context.Background(), g, Options{Workers: 1})
			if err != nil {
				if errors.Is(err, ErrNotApplicable) {
					continue
				}
				t.Fatalf("%s on %s: %v", e.Name(), c.name, err)
			}
			for _, w := range []int{4, 2, 1} {
				r := blRoute(t, e, g, Options{Workers: w})
				if !lft.Equal(ref, r) {
					t.Fatalf("%s on %s: %d workers give other tables than 1 worker", e.Name(), c.name, w)
				}
			}
		}
	}
}

// TestBaselineRegistered checks the registry names.
func TestBaselineRegistered(t *testing.T) {
	for _, name := range []string{"minhop", "updn", "ftree"} {
		e, err := Lookup(name)
		if err != nil || e.Name() != name {
			t.Fatalf("Lookup(%q) = %v, %v", name, e, err)
		}
	}
	if (MinHop{}).DeadlockFree() || !(UpDn{}).DeadlockFree() || !(Ftree{}).DeadlockFree() {
		t.Fatal("DeadlockFree: want minhop false, updn and ftree true")
	}
	g := blTopo(t)(topo.Clos2(4))
	for _, e := range blEngines() {
		if _, err := routeParams(context.Background(), e, g, Options{}, map[string]string{"x": "1"}); err == nil {
			t.Errorf("%s accepts an unknown parameter", e.Name())
		}
		if _, err := e.Route(context.Background(), g, Options{MaxVLs: 99}); err == nil {
			t.Errorf("%s accepts 99 VLs", e.Name())
		}
	}
}

// TestBaselineCancel: a cancelled context stops every engine.
func TestBaselineCancel(t *testing.T) {
	g := blTopo(t)(topo.FatTree(4, 3, 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, e := range blEngines() {
		if _, err := e.Route(ctx, g, Options{}); !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", e.Name(), err)
		}
	}
}

// TestBaselineProgress: Progress ends with done == total.
func TestBaselineProgress(t *testing.T) {
	g := blTopo(t)(topo.FatTree(4, 3, 0))
	for _, e := range blEngines() {
		var calls, last, total atomic.Int64
		opt := Options{Workers: 2, Progress: func(done, tot int) {
			calls.Add(1)
			if int64(done) > last.Load() {
				last.Store(int64(done))
			}
			total.Store(int64(tot))
		}}
		blRoute(t, e, g, opt)
		if calls.Load() == 0 || last.Load() != total.Load() {
			t.Errorf("%s: %d progress calls, last %d of %d", e.Name(), calls.Load(), last.Load(), total.Load())
		}
	}
}

// TestBaselineLMC routes fabrics whose ports answer 4 LIDs each and
// checks that the LIDs of one port leave a remote leaf on different links.
func TestBaselineLMC(t *testing.T) {
	for _, mk := range []func() (*topo.Topology, error){
		func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) },
		func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 1, false) },
	} {
		f := blMust(mk()).Fabric.Clone()
		for i := range f.Nodes {
			for p := range f.Nodes[i].Ports {
				f.Nodes[i].Ports[p].LID, f.Nodes[i].Ports[p].LMC = 0, 0
			}
		}
		if err := f.AssignLIDs(2); err != nil {
			t.Fatal(err)
		}
		g := blCompile(t, f)
		for _, e := range blEngines() {
			r, err := e.Route(context.Background(), g, Options{})
			if errors.Is(err, ErrNotApplicable) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			blVerify(t, g, r, e.DeadlockFree(), e.Name() != "ftree")
			if e.Name() == "updn" {
				continue
			}
			// A terminal on the last leaf; its 4 LIDs seen from leaf 0.
			tm := g.Terms[len(g.Terms)-1]
			seen := map[uint8]bool{}
			for l := range 4 {
				seen[r.Port(0, int(tm.LID)+l)] = true
			}
			if len(seen) < 2 {
				t.Errorf("%s: the 4 LIDs of one port all leave switch 0 through port %v", e.Name(), seen)
			}
			t.Logf("%s on %s: 4 LIDs leave switch 0 on %d ports", e.Name(), g.F.Header[0], len(seen))
		}
	}
}

// TestDestinations compares the destination list with the LIDs the
// fabric's owners answer.
func TestDestinations(t *testing.T) {
	g := blTopo(t)(topo.Clos2(6))
	ds := Destinations(g)
	if want := len(g.Terms) + g.NumSwitches(); len(ds) != want {
		t.Fatalf("%d destinations, want %d", len(ds), want)
	}
	for i, d := range ds {
		if i > 0 && ds[i-1].LID >= d.LID {
			t.Fatal("destinations not in increasing LID order")
		}
		sw, term := g.Owner(int(d.LID))
		if term != d.Term || (term < 0 && (sw != d.Switch || d.Port != 0)) ||
			(term >= 0 && (g.Terms[term].Switch != d.Switch || g.Terms[term].SwitchPort != d.Port)) {
			t.Fatalf("destination %+v disagrees with Owner (%d, %d)", d, sw, term)
		}
	}
}

// TestHopRow compares hopRow with the fabric's BFS on random fabrics.
func TestHopRow(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		tp := blMust(topo.Random(30, 3, 0, seed))
		f, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{LinkFraction: 0.1, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		g := blCompile(t, f)
		S := g.NumSwitches()
		b, q := make([]int32, S), make([]int32, S)
		row := make([]uint16, S)
		for s := int32(0); int(s) < S; s++ {
			g.BFS(s, b, q)
			hopRow(g, s, row, q)
			for i := range b {
				if (b[i] < 0) != (row[i] == noDist) || (b[i] >= 0 && int32(row[i]) != b[i]) {
					t.Fatalf("seed %d, switch %d: BFS %v, row %v", seed, s, b, row)
				}
			}
		}
	}
}

// TestResolveSwitch covers GUIDs, port GUIDs, descriptions and ambiguity.
func TestResolveSwitch(t *testing.T) {
	f := blMust(topo.Clos2(4)).Fabric.Clone()
	g := blCompile(t, f)
	sw := g.Switches[3]
	ca := g.Terms[2]
	portGUID := f.Nodes[ca.Node].Ports[ca.Port].GUID
	cases := map[string]int32{
		fmt.Sprintf("0x%016x", f.Nodes[sw].GUID): 3,
		fmt.Sprintf("0X%X", f.Nodes[sw].GUID):    3,
		f.Nodes[sw].Desc:                         3,
		fmt.Sprintf("0x%x", portGUID):            ca.Switch,
		f.Nodes[ca.Node].Desc:                    ca.Switch,
	}
	for spec, want := range cases {
		if got, err := ResolveSwitch(g, spec); err != nil || got != want {
			t.Errorf("ResolveSwitch(%q) = %d, %v; want %d", spec, got, err, want)
		}
	}
	for _, spec := range []string{"", "0x1", "nobody", "0xzz"} {
		if _, err := ResolveSwitch(g, spec); !errors.Is(err, ErrUnknownSwitch) {
			t.Errorf("ResolveSwitch(%q): err %v, want ErrUnknownSwitch", spec, err)
		}
	}
	f.Nodes[g.Switches[0]].Desc = f.Nodes[g.Switches[1]].Desc
	g = blCompile(t, f)
	if _, err := ResolveSwitch(g, f.Nodes[g.Switches[1]].Desc); !errors.Is(err, ErrUnknownSwitch) {
		t.Errorf("ambiguous description: err %v", err)
	}
}

// TestSwitchComponents labels a cut ring.
func TestSwitchComponents(t *testing.T) {
	f := blMust(topo.Ring(6, 1, nil)).Fabric.Clone()
	// Cut the cables 0-1 and 3-4: components {1,2,3} and {4,5,0}.
	for _, pair := range [][2]int{{0, 1}, {3, 4}} {
		a, b := blSwitchNode(f, pair[0]), blSwitchNode(f, pair[1])
		for p := range f.Nodes[a].Ports {
			if f.Nodes[a].Ports[p].Peer.Node == b {
				f.Port(f.Nodes[a].Ports[p].Peer).Peer = fabric.NoPeer
				f.Nodes[a].Ports[p].Peer = fabric.NoPeer
			}
		}
	}
	g := blCompile(t, f)
	if got, want := g.SwitchComponents(), []int32{0, 1, 1, 1, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("components %v, want %v", got, want)
	}
	for _, e := range blEngines()[:2] {
		blVerify(t, g, blRoute(t, e, g, Options{}), e.DeadlockFree(), true)
	}
}

// TestBaselineAllocs: allocations do not grow with the fabric (no
// allocation per destination or per switch in the hot loops).
func TestBaselineAllocs(t *testing.T) {
	small := blTopo(t)(topo.FatTree(4, 3, 0))
	large := blTopo(t)(topo.FatTree(8, 3, 0))
	for _, e := range blEngines() {
		count := func(g *fabric.Graph) float64 {
			return testing.AllocsPerRun(3, func() {
				if _, err := e.Route(context.Background(), g, Options{Workers: 2}); err != nil {
					t.Fatal(err)
				}
			})
		}
		a, b := count(small), count(large)
		t.Logf("%-6s allocations: %.0f (k=4), %.0f (k=8)", e.Name(), a, b)
		if b > a+64 {
			t.Errorf("%s: %.0f allocations for k=8 against %.0f for k=4", e.Name(), b, a)
		}
	}
}
