package nue

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

func build(t testing.TB, tp *topo.Topology, err error) *fabric.Graph {
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

// withLMC compiles a copy of f with its LIDs assigned afresh under lmc.
func withLMC(t testing.TB, f *fabric.Fabric, lmc uint8) *fabric.Graph {
	t.Helper()
	f = f.Clone()
	for i := range f.Nodes {
		for p := range f.Nodes[i].Ports {
			f.Nodes[i].Ports[p].LID = 0
		}
	}
	if err := f.AssignLIDs(lmc); err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// routeKV routes g with Nue configured by name=value parameters.
func routeKV(g *fabric.Graph, opt routing.Options, kv map[string]string) (*lft.Routing, *Stats, error) {
	c, err := ParseConfig(Config{}, kv)
	if err != nil {
		return nil, nil, err
	}
	return Engine{Config: c}.RouteStats(context.Background(), g, opt)
}

// verify routes g with k layers and checks the result: every connected
// terminal pair delivered, acyclic CDG within k VLs, and every switch's
// own packets delivered without loops or dead ends.
func verify(t *testing.T, name string, g *fabric.Graph, k int, params map[string]string) *Stats {
	t.Helper()
	r, st, err := routeKV(g, routing.Options{MaxVLs: k}, params)
	if err != nil {
		t.Fatalf("%s k=%d: %v", name, k, err)
	}
	if r.NumVLs > k {
		t.Fatalf("%s k=%d: %d VLs", name, k, r.NumVLs)
	}
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: k, SwitchDelivery: true})
	if err != nil {
		t.Fatalf("%s k=%d params=%v: %v\n%s", name, k, params, err, rep)
	}
	return st
}

// applicability fabrics: one of every generator family, small.
var families = []struct {
	name string
	gen  func() (*topo.Topology, error)
}{
	{"ring5", func() (*topo.Topology, error) { return topo.Ring(5, 1, nil) }},
	{"ring5-shortcut", func() (*topo.Topology, error) { return topo.Ring(5, 2, []int{2, 4}) }},
	{"torus4x4", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 2, false) }},
	{"torus3x3x3", func() (*topo.Topology, error) { return topo.Torus([]int{3, 3, 3}, 1, false) }},
	{"mesh3x5", func() (*topo.Topology, error) { return topo.Torus([]int{3, 5}, 1, true) }},
	{"hypercube4", func() (*topo.Topology, error) { return topo.Hypercube(4, 1) }},
	{"fattree4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
	{"xgft", func() (*topo.Topology, error) { return topo.XGFT(2, []int{3, 4}, []int{1, 3}) }},
	{"clos2-8", func() (*topo.Topology, error) { return topo.Clos2(8) }},
	{"kautz2-3", func() (*topo.Topology, error) { return topo.Kautz(2, 3, 1) }},
	{"dragonfly", func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 0) }},
	{"fbfly3x3", func() (*topo.Topology, error) { return topo.FlattenedButterfly([]int{3, 3}, 2) }},
	{"slimfly5", func() (*topo.Topology, error) { return topo.SlimFly(5, 1) }},
	{"novacube6", func() (*topo.Topology, error) { return topo.NovaCube(6, 2, 1) }},
	{"rsi-hr3", func() (*topo.Topology, error) { return topo.RSI("hypercube-16", 3, 1) }},
	{"random24", func() (*topo.Topology, error) { return topo.Random(24, 4, 2, 11) }},
}

// TestApplicability is the 100 % applicability claim (seed 001, §4): every
// family, with 0, 1, 3 and 5 % of its switch-to-switch cables failed
// (several seeds), routed with every k in 1..8 and both partitions, passes
// the verifier. Pairs the failures disconnect are skipped by the verifier.
func TestApplicability(t *testing.T) {
	for _, fam := range families {
		tp, err := fam.gen()
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []float64{0, 0.01, 0.03, 0.05} {
			seeds := []uint64{1, 2}
			if frac == 0 {
				seeds = seeds[:1]
			}
			for _, seed := range seeds {
				f := tp.Fabric
				if frac > 0 {
					nl := int(frac*float64(len(tp.Fabric.Links())) + 0.5)
					if nl == 0 {
						nl = 1
					}
					if f, _, err = topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: nl, Seed: seed}); err != nil {
						t.Fatalf("%s: %v", fam.name, err)
					}
				}
				g, err := fabric.Compile(f)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%s/fail%.0f%%/seed%d", fam.name, frac*100, seed)
				for k := 1; k <= 8; k++ {
					verify(t, name, g, k, nil)
					if frac == 0 && (k == 2 || k == 8) {
						verify(t, name, g, k, map[string]string{"partition": "roundrobin"})
						verify(t, name, g, k, map[string]string{"partition": "locality", "schedule": "lockstep"})
						verify(t, name, g, k, map[string]string{"partition": "switches", "share": "switch"})
						verify(t, name, g, k, map[string]string{"share": "none"})
					}
				}
			}
		}
	}
}

// TestRandomFabrics is the property test: random connected fabrics of
// random size and degree, random k, always verified.
func TestRandomFabrics(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 10
	}
	rng := rand.New(rand.NewPCG(42, 7))
	for i := 0; i < n; i++ {
		sw := 4 + rng.IntN(40)
		deg := 2 + rng.IntN(min(6, sw-1))
		hosts := 1 + rng.IntN(3)
		tp, err := topo.Random(sw, deg, hosts, rng.Uint64())
		if err != nil {
			t.Fatal(err)
		}
		g := build(t, tp, nil)
		k := 1 + rng.IntN(8)
		verify(t, fmt.Sprintf("random sw=%d deg=%d", sw, deg), g, k, nil)
	}
}

// TestCorpus routes every sample dump of ../shared/corpus (LIDs assigned
// where the dump has none).
func TestCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpus", "ibnetdiscover")
	files, _ := filepath.Glob(filepath.Join(dir, "*.topo"))
	if len(files) == 0 {
		t.Skipf("SKIPPING: no sample dumps in %s (../shared absent)", dir)
	}
	for _, file := range files {
		g := compileDump(t, file)
		for _, k := range []int{1, 2, 4, 8} {
			verify(t, filepath.Base(file), g, k, nil)
		}
	}
}

// TestDeterminism: equal inputs give byte-identical tables, whatever the
// number of workers and for both schedules.
// The fat tree has switches without terminals, whose LIDs are routed in
// parallel rounds (see schedule).
func TestDeterminism(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4, 3}, 2, false)
	torus := build(t, tp, err)
	tp, err = topo.FatTree(4, 3, 0)
	ft := build(t, tp, err)
	for _, g := range []*fabric.Graph{torus, ft} {
		for _, sched := range []string{"sequential", "lockstep"} {
			var ref *lft.Routing
			for _, workers := range []int{1, 4, 1, 2} {
				r, _, err := Engine{Config: Config{Schedule: Schedule(sched)}}.RouteStats(context.Background(), g, routing.Options{MaxVLs: 4, Workers: workers})
				if err != nil {
					t.Fatal(err)
				}
				if ref == nil {
					ref = r
				} else if !lft.Equal(ref, r) {
					t.Fatalf("%s: routing differs with %d workers", sched, workers)
				}
			}
		}
	}
}

// TestShareSwitch: with share=switch the terminal LIDs of one switch in one
// layer (and that switch's own LID) get the same next hop at every other
// switch, one search each, and the tables verify. The default shares in
// direct networks only, and not for SAR jobs.
func TestShareSwitch(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4, 2}, 3, false)
	g := build(t, tp, err)
	share := map[string]string{"share": "switch"}
	verify(t, "torus share", g, 2, share)
	r, st, err := routeKV(g, routing.Options{MaxVLs: 2}, share)
	if err != nil {
		t.Fatal(err)
	}
	searches, lids := 0, 0
	for _, l := range st.Layers {
		searches += l.Searches
		lids += l.Destinations
	}
	if searches != g.NumSwitches() || lids != len(g.Terms)+g.NumSwitches() {
		t.Errorf("%d searches for %d LIDs, want one per switch (%d)", searches, lids, g.NumSwitches())
	}
	for _, tm := range g.Terms {
		swLID := int(g.F.Nodes[g.Switches[tm.Switch]].Ports[0].LID)
		if r.SL.ByDest[tm.LID] != r.SL.ByDest[swLID] {
			t.Fatalf("LID %d in layer %d, its switch's LID in %d", tm.LID, r.SL.ByDest[tm.LID], r.SL.ByDest[swLID])
		}
		for v := int32(0); int(v) < g.NumSwitches(); v++ {
			if v != tm.Switch && r.Port(v, int(tm.LID)) != r.Port(v, swLID) {
				t.Fatalf("switch %s: LID %d leaves on port %d, its switch's LID on %d", g.SwitchName(v), tm.LID, r.Port(v, int(tm.LID)), r.Port(v, swLID))
			}
		}
	}
	same := func(g *fabric.Graph, opt routing.Options, want string) {
		t.Helper()
		a, _, err := Route(context.Background(), g, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := Engine{Config: Config{Share: Share(want)}}.RouteStats(context.Background(), g, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !lft.Equal(a, b) {
			t.Errorf("default differs from share=%s", want)
		}
	}
	same(g, routing.Options{MaxVLs: 4}, "switch")
	tp, err = topo.FatTree(4, 3, 0)
	ft := build(t, tp, err)
	same(ft, routing.Options{MaxVLs: 4}, "switchlid")
	jobs := []routing.Job{{ID: "1", Terms: []int32{0, 1, 2, 5, 9}}, {ID: "2", Terms: []int32{3, 4, 20, 21}}}
	same(g, routing.Options{MaxVLs: 4, SAR: true, Jobs: jobs}, "switchlid")
	// share=switchlid on the fat tree: one search per terminal LID and per
	// switch LID of a switch without terminals in its layer; a leaf's LID
	// follows a terminal LID of its leaf and layer; the tables verify.
	sl := map[string]string{"share": "switchlid"}
	verify(t, "fat tree share=switchlid", ft, 4, sl)
	r, st, err = routeKV(ft, routing.Options{MaxVLs: 4}, sl)
	if err != nil {
		t.Fatal(err)
	}
	searches = 0
	for _, l := range st.Layers {
		searches += l.Searches
	}
	leaves := map[int32]bool{}
	for _, tm := range ft.Terms {
		leaves[tm.Switch] = true
	}
	if want := len(ft.Terms) + ft.NumSwitches() - len(leaves); searches != want {
		t.Errorf("switchlid: %d searches, want %d (terminal LIDs and non-leaf switch LIDs)", searches, want)
	}
	for leaf := range leaves {
		swLID := int(ft.F.Nodes[ft.Switches[leaf]].Ports[0].LID)
		follows := false
		for _, tm := range ft.Terms {
			if tm.Switch != leaf || r.SL.ByDest[tm.LID] != r.SL.ByDest[swLID] {
				continue
			}
			same := true
			for v := int32(0); int(v) < ft.NumSwitches(); v++ {
				if v != leaf && r.Port(v, int(tm.LID)) != r.Port(v, swLID) {
					same = false
				}
			}
			follows = follows || same
		}
		if !follows {
			t.Errorf("switchlid: leaf %s's LID follows no terminal LID of its leaf and layer", ft.SwitchName(leaf))
		}
	}
}

// TestBalanceTargets: with k = 8, average hops within 5 % of the minimal
// on tori and fat trees (issue acceptance; the larger instances are in
// the benchmarks and bench/).
func TestBalanceTargets(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func() (*topo.Topology, error)
	}{
		{"torus6x6x6", func() (*topo.Topology, error) { return topo.Torus([]int{6, 6, 6}, 1, false) }},
		{"torus8x8", func() (*topo.Topology, error) { return topo.Torus([]int{8, 8}, 2, false) }},
		{"fattree8-3", func() (*topo.Topology, error) { return topo.FatTree(8, 3, 0) }},
		{"clos3-8", func() (*topo.Topology, error) { return topo.Clos3(8) }},
	} {
		tp, err := c.gen()
		g := build(t, tp, err)
		r, _, err := Route(context.Background(), g, routing.Options{MaxVLs: 8})
		if err != nil {
			t.Fatal(err)
		}
		m, err := routing.Measure(g, r, 0)
		if err != nil {
			t.Fatal(err)
		}
		minimal := g.Hops().AvgTermHops
		if m.AvgHops > 1.05*minimal {
			t.Errorf("%s: average hops %.3f > 1.05 × minimal %.3f", c.name, m.AvgHops, minimal)
		}
		t.Logf("%s: avg hops %.3f (minimal %.3f, ×%.3f), max EFI %d", c.name, m.AvgHops, minimal, m.AvgHops/minimal, m.MaxEFI)
	}
}

// TestFatTreeOptimalBalance: on a full 3-level fat tree every leaf's
// up-links can carry exactly their share (4 terminals × 60 remote
// destinations over 4 up-links = 60 paths). Nue reaches that optimum when
// the layers divide the leaves' LIDs evenly (k = 1, 2, 4, 8); for other k
// the round-robin layers cut across leaves and it stays within 1.75×.
func TestFatTreeOptimalBalance(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	g := build(t, tp, err)
	for k := 1; k <= 8; k++ {
		r, _, err := Route(context.Background(), g, routing.Options{MaxVLs: k})
		if err != nil {
			t.Fatal(err)
		}
		m, _ := routing.Measure(g, r, 0)
		switch k {
		case 1, 2, 4, 8:
			if m.MaxEFI != 60 {
				t.Errorf("k=%d: max EFI %d, optimum 60", k, m.MaxEFI)
			}
		default:
			if m.MaxEFI > 105 {
				t.Errorf("k=%d: max EFI %d > 1.75 × optimum 60", k, m.MaxEFI)
			}
		}
	}
}

// TestLMC: every LID of a port with LMC > 0 is a destination of its own.
func TestLMC(t *testing.T) {
	tp, err := topo.Torus([]int{3, 4}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	g := withLMC(t, tp.Fabric, 2)
	verify(t, "lmc2", g, 3, nil)
	r, _, _ := Route(context.Background(), g, routing.Options{MaxVLs: 3})
	for _, tm := range g.Terms {
		for l := 0; l < 4; l++ {
			if r.Port(tm.Switch, int(tm.LID)+l) != tm.SwitchPort {
				t.Fatalf("LID %d not delivered by its switch", int(tm.LID)+l)
			}
		}
	}
}

func TestErrorsAndRegistry(t *testing.T) {
	tp, err := topo.Ring(4, 1, nil)
	g := build(t, tp, err)
	for _, p := range []map[string]string{{"partition": "metis"}, {"schedule": "fast"}, {"share": "port"}, {"bogus": "1"}} {
		if _, _, err := routeKV(g, routing.Options{}, p); err == nil {
			t.Errorf("params %v accepted", p)
		}
	}
	if _, _, err := Route(context.Background(), g, routing.Options{MaxVLs: 16}); err == nil {
		t.Error("16 VLs accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Route(ctx, g, routing.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	e, err := routing.Lookup("nue")
	if err != nil || !e.DeadlockFree() {
		t.Fatalf("registry: %v", err)
	}
	res, err := routing.RouteChain(context.Background(), g, []routing.Engine{e}, routing.Options{MaxVLs: 2})
	if err != nil || !res.Report.OK() || res.Routing.Engine != "nue" {
		t.Fatalf("chain: %v", err)
	}
	// Unassigned LIDs are refused, not routed.
	f := tp.Fabric.Clone()
	f.Nodes[len(f.Nodes)-1].Ports[1].LID = 0
	g2, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Route(context.Background(), g2, routing.Options{}); err == nil {
		t.Error("unassigned LID accepted")
	}
}

func TestStats(t *testing.T) {
	tp, err := topo.Torus([]int{4, 4}, 2, false)
	g := build(t, tp, err)
	_, st, err := Route(context.Background(), g, routing.Options{MaxVLs: 4})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, l := range st.Layers {
		if l.Root == "" || l.EscapeTurns == 0 || l.UsedTurns < l.EscapeTurns {
			t.Errorf("layer %+v", l)
		}
		total += l.Destinations
	}
	if want := len(g.Terms) + g.NumSwitches(); total != want {
		t.Errorf("%d destinations in layers, want %d LIDs", total, want)
	}
	if st.Partition != Locality || st.Schedule != Sequential {
		t.Errorf("defaults: %s %s", st.Partition, st.Schedule)
	}
	ft, err := topo.FatTree(4, 2, 0)
	g = build(t, ft, err)
	if _, st, _ = Route(context.Background(), g, routing.Options{}); st.Partition != RoundRobin {
		t.Errorf("fat tree partition %s", st.Partition)
	}
}

// TestHighRadix: switches with more than 64 switch neighbours need two
// words per turn mask (turnIndex.words), a path of relax and the cycle
// checks that smaller fabrics never take.
func TestHighRadix(t *testing.T) {
	tp, err := topo.Random(72, 66, 1, 5)
	g := build(t, tp, err)
	ti := newTurnIndex(g)
	if ti.words < 2 {
		t.Fatalf("max degree gives %d mask words, want 2", ti.words)
	}
	for _, k := range []int{1, 3} {
		verify(t, "random72-deg66", g, k, nil)
		verify(t, "random72-deg66", g, k, map[string]string{"share": "none"})
	}
	// relax's one-word fast path and its general path give the same tables.
	for _, c := range []struct {
		name string
		gen  func() (*topo.Topology, error)
	}{
		{"torus4x4x3", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 3}, 2, false) }},
		{"fattree4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
		{"random24", func() (*topo.Topology, error) { return topo.Random(24, 4, 2, 11) }},
	} {
		tp, err := c.gen()
		g := build(t, tp, err)
		for _, k := range []int{1, 4} {
			fast, _, err := Route(context.Background(), g, routing.Options{MaxVLs: k})
			if err != nil {
				t.Fatal(err)
			}
			tune := defaultTuning()
			tune.relaxWide = true
			wide, _, err := Engine{}.routeTuned(context.Background(), g, routing.Options{MaxVLs: k}, tune, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !lft.Equal(fast, wide) {
				t.Errorf("%s k=%d: relax's fast and general paths route differently", c.name, k)
			}
		}
	}
}

// TestPartialEscape: a torus with one layer, where many searches reach an
// impasse. The unreached sources take the escape routes while the
// reached switches keep theirs (dijkstra.go, partialEscape): no terminal
// destination falls back as a whole, and the routing verifies (also with
// one search per LID, where a switch's LIDs stall on their own).
func TestPartialEscape(t *testing.T) {
	tp, err := topo.Torus([]int{6, 6, 6}, 2, false)
	g := build(t, tp, err)
	for _, share := range []string{"auto", "none"} {
		st := verify(t, "torus6x6x6/share="+share, g, 1, map[string]string{"share": share})
		partial, whole := 0, 0
		for _, l := range st.Layers {
			partial += l.PartialFallbacks
			whole += l.TermFallbacks
		}
		if partial == 0 || whole != 0 {
			t.Errorf("share=%s: %d partial and %d whole fallbacks of terminal LIDs, want some and none", share, partial, whole)
		}
	}
}

// compileDump parses an ibnetdiscover dump, assigns LIDs where it has
// none and compiles it.
func compileDump(tb testing.TB, file string) *fabric.Graph {
	tb.Helper()
	res, err := ibnetdiscover.ParseFile(file)
	return compileParsed(tb, res, err)
}

// compileParsed is compileDump after the parse.
func compileParsed(tb testing.TB, res *ibnetdiscover.Result, err error) *fabric.Graph {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	if err := res.Fabric.AssignLIDs(0); err != nil {
		tb.Fatal(err)
	}
	g, err := fabric.Compile(res.Fabric)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}
