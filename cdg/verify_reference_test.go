package cdg_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// This file compares cdg.Verify with enginetest.Reference, a naive
// pair-by-pair walk that collects the dependencies between virtual
// channels into a map, on random routings of small fabrics: random
// shortest-path and random spanning trees per destination, some entries
// corrupted (loops, dead ends, wrong ports), random SLs per destination,
// per source switch and per LID pair, random SL2VL tables per switch and
// port pair (VLs changing along paths).

// corpusDir is the ibnetdiscover sample corpus, relative to this package.
const corpusDir = "../../shared/corpus/ibnetdiscover"

type refFabric struct {
	name string
	g    *fabric.Graph
}

// must returns a function that unwraps a generator's result.
func must(t testing.TB) func(*topo.Topology, error) *fabric.Fabric {
	return func(tp *topo.Topology, err error) *fabric.Fabric {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tp.Fabric
	}
}

func compileFabric(t testing.TB, f *fabric.Fabric) *fabric.Graph {
	t.Helper()
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// withLMC returns a copy of f with every LID reassigned with the given LMC.
func withLMC(t testing.TB, f *fabric.Fabric, lmc uint8) *fabric.Fabric {
	t.Helper()
	f = f.Clone()
	for i := range f.Nodes {
		for p := range f.Nodes[i].Ports {
			f.Nodes[i].Ports[p].LID, f.Nodes[i].Ports[p].LMC = 0, 0
		}
		f.Nodes[i].Enhanced = f.Nodes[i].Kind == fabric.Switch && i%2 == 0 // enhanced port 0 takes the LMC too
	}
	if err := f.AssignLIDs(lmc); err != nil {
		t.Fatal(err)
	}
	return f
}

// refFabrics lists small fabrics with what the verifier must handle:
// switches without hosts, parallel cables, loopbacks, two-port CAs, LMC,
// a disconnected switch graph, more LIDs than a walker reads at a time.
func refFabrics(t testing.TB) []refFabric {
	var out []refFabric
	gen := must(t)
	add := func(name string, f *fabric.Fabric) {
		out = append(out, refFabric{name, compileFabric(t, f)})
	}
	add("ring5", gen(topo.Ring(5, 1, nil)))
	add("ring6-shortcut-nohosts", gen(topo.Ring(6, 0, []int{0, 3})))
	add("torus3x4", gen(topo.Torus([]int{3, 4}, 1, false)))
	add("mesh2x3", gen(topo.Torus([]int{2, 3}, 2, true)))
	add("dragonfly-2groups-parallel", gen(topo.Dragonfly(1, 2, 2, 2)))
	add("fattree2-3", gen(topo.FatTree(2, 3, 0)))
	for seed := uint64(1); seed <= 3; seed++ {
		add(fmt.Sprintf("random8-%d", seed), gen(topo.Random(8, 3, int(seed%3), seed)))
	}
	add("ring4-lmc1", withLMC(t, gen(topo.Ring(4, 2, nil)), 1))
	add("kautz2-2-lmc2", withLMC(t, gen(topo.Kautz(2, 2, 1)), 2))
	// More LIDs than a walker's block (64), so that blocks, workers and
	// the order of examples across them count.
	add("torus4x4x2-h2", gen(topo.Torus([]int{4, 4, 2}, 2, false)))
	add("random24-h3-lmc1", withLMC(t, gen(topo.Random(24, 4, 3, 7)), 1))
	broken, _, err := topo.InjectFailures(gen(topo.Torus([]int{3, 3}, 1, false)), topo.FailureSpec{Links: 9, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	add("torus3x3-9failed", broken)
	files, _ := filepath.Glob(filepath.Join(corpusDir, "example-*.topo"))
	if len(files) == 0 {
		t.Logf("NOTE: corpus %s not found; the reference comparison runs on generated fabrics only", corpusDir)
	}
	for _, file := range files {
		res, err := ibnetdiscover.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Fabric.AssignLIDs(0); err != nil {
			t.Fatal(err)
		}
		add(filepath.Base(file), res.Fabric)
	}
	return out
}

// randomTree points every switch that reaches switch dsw at a neighbour
// closer to it in a random in-tree: a random shortest-path tree, or a
// random spanning tree grown from dsw (paths of any length).
func randomTree(g *fabric.Graph, rng *rand.Rand, dsw int32, shortest bool) []int32 {
	S := g.NumSwitches()
	next := make([]int32, S)
	for i := range next {
		next[i] = -1
	}
	if shortest {
		dist, queue := make([]int32, S), make([]int32, S)
		g.BFS(dsw, dist, queue)
		for u := int32(0); int(u) < S; u++ {
			var cand []int32
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if dist[u] > 0 && dist[g.Head[c]] == dist[u]-1 {
					cand = append(cand, c)
				}
			}
			if len(cand) > 0 {
				next[u] = cand[rng.IntN(len(cand))]
			}
		}
		return next
	}
	in := make([]bool, S)
	in[dsw] = true
	var frontier []int32 // channels entering the tree
	grow := func(v int32) {
		for c := g.Off[v]; c < g.Off[v+1]; c++ {
			frontier = append(frontier, g.Rev[c])
		}
	}
	grow(dsw)
	for len(frontier) > 0 {
		i := rng.IntN(len(frontier))
		c := frontier[i]
		frontier[i] = frontier[len(frontier)-1]
		frontier = frontier[:len(frontier)-1]
		if u := g.Tail[c]; !in[u] {
			in[u], next[u] = true, c
			grow(u)
		}
	}
	return next
}

// randomRouting builds a random routing of g; see the file comment.
func randomRouting(g *fabric.Graph, rng *rand.Rand) *lft.Routing {
	r := lft.New(g, "random")
	r.NumVLs = lft.MaxVLs
	S := g.NumSwitches()
	corrupt := 0.0
	if rng.IntN(3) == 0 {
		corrupt = 0.02 + 0.1*rng.Float64()
	}
	shortest := rng.IntN(2) == 0
	for lid := 1; lid <= g.MaxLID(); lid++ {
		sw, term := g.Owner(lid)
		if sw < 0 {
			continue
		}
		dport := uint8(0)
		if term >= 0 {
			dport = g.Terms[term].SwitchPort
		}
		r.SetPort(sw, lid, dport)
		for u, c := range randomTree(g, rng, sw, shortest) {
			if c >= 0 {
				r.SetPort(int32(u), lid, g.OutPort[c])
			}
		}
		for u := int32(0); int(u) < S; u++ {
			if rng.Float64() >= corrupt {
				continue
			}
			switch rng.IntN(3) {
			case 0:
				r.SetPort(u, lid, lft.NoPort)
			case 1:
				r.SetPort(u, lid, 0)
			default: // any port, also one beyond the switch's last
				r.SetPort(u, lid, uint8(1+rng.IntN(g.F.Nodes[g.Switches[u]].NumPorts()+1)))
			}
		}
	}
	nSL, nVL := 1+rng.IntN(4), 1+rng.IntN(4)
	if rng.IntN(8) == 0 {
		nSL, nVL = lft.NumSLs, lft.MaxVLs
	}
	for i := range r.SL2VL.Default {
		r.SL2VL.Default[i] = uint8(rng.IntN(nVL))
	}
	switch rng.IntN(4) {
	case 1:
		fillRandom(rng, r.SL.ByDest, nSL)
	case 2:
		r.SL.EnableBySrc(S)
		fillRandom(rng, r.SL.BySrc, nSL)
	case 3:
		fillRandom(rng, r.SL.ByDest, nSL)
		r.SL.Pair = map[uint32]uint8{}
		for i := 0; i < 4*len(g.Terms); i++ {
			src := g.Terms[rng.IntN(len(g.Terms))]
			slid := int(src.LID) + rng.IntN(1<<src.LMC)
			r.SL.Pair[uint32(slid)<<16|uint32(1+rng.IntN(g.MaxLID()))] = uint8(rng.IntN(nSL))
		}
	}
	if rng.IntN(2) == 0 {
		r.SL2VL.Switch = make([]*lft.PortSL2VL, S)
		for s := range r.SL2VL.Switch {
			if rng.IntN(3) == 0 {
				continue // this switch uses Default
			}
			n := g.F.Nodes[g.Switches[s]].NumPorts()
			tab := lft.NewPortSL2VL(n, r.SL2VL.Default)
			for i := range tab.VL {
				if rng.IntN(3) == 0 {
					tab.VL[i] = uint8(rng.IntN(nVL))
				}
			}
			r.SL2VL.Switch[s] = tab
		}
	}
	return r
}

func fillRandom(rng *rand.Rand, b []uint8, n int) {
	for i := range b {
		b[i] = uint8(rng.IntN(n))
	}
}

// compareWithReference checks a verifier report against the reference.
func compareWithReference(t *testing.T, g *fabric.Graph, rep *cdg.Report, ref *enginetest.RefReport, maxExamples int) {
	t.Helper()
	type counts struct{ Pairs, Delivered, Unconnected, Loops, DeadEnds int64 }
	got := counts{rep.Pairs, rep.Delivered, rep.Unconnected, rep.Loops, rep.DeadEnds}
	want := counts{ref.Pairs, ref.Delivered, ref.Unconnected, ref.Loops, ref.DeadEnds}
	if got != want {
		t.Errorf("pairs: verifier %+v, reference %+v", got, want)
	}
	if rep.VLsUsed != ref.VLsUsed {
		t.Errorf("VLs used: verifier %d, reference %d", rep.VLsUsed, ref.VLsUsed)
	}
	per, cross := ref.EdgesPerVL()
	if rep.CDGEdges != len(ref.Deps) || rep.CrossVL != cross {
		t.Errorf("dependencies: verifier %d (%d cross-VL), reference %d (%d cross-VL)", rep.CDGEdges, rep.CrossVL, len(ref.Deps), cross)
	}
	for vl := 0; vl < max(len(rep.EdgesPerVL), 16); vl++ {
		n := 0
		if vl < len(rep.EdgesPerVL) {
			n = rep.EdgesPerVL[vl]
		}
		if n != per[uint8(vl)] {
			t.Errorf("VL%d: verifier %d dependencies, reference %d", vl, n, per[uint8(vl)])
		}
	}
	if cyc := ref.Cyclic(); cyc != (rep.Cycle != nil) {
		t.Errorf("cyclic: verifier %v, reference (gonum Tarjan) %v", rep.Cycle != nil, cyc)
	}
	if rep.Cycle != nil {
		checkCycle(t, g, rep.Cycle, ref)
	}
	// Examples: the first failing source switch per destination LID, in
	// LID order, as many as asked for.
	var want2 []enginetest.Failure
	seen := map[[2]int]bool{}
	for _, f := range ref.Failures {
		k := [2]int{f.DLID, int(f.Src)}
		if !seen[k] && len(want2) < maxExamples {
			seen[k] = true
			want2 = append(want2, f)
		}
	}
	if len(rep.Examples) != len(want2) {
		t.Errorf("%d examples, want %d", len(rep.Examples), len(want2))
		return
	}
	for i, e := range rep.Examples {
		w := want2[i]
		src := fmt.Sprintf("%s port %d", g.F.Name(w.Port.Node), w.Port.Port)
		if w.Self {
			src = fmt.Sprintf("switch %q", g.F.Name(w.Port.Node))
		}
		var at []string
		for _, s := range w.At {
			at = append(at, fmt.Sprintf("%s at switch %q", w.Reason.String(), g.SwitchName(s)))
		}
		if e.SLID != w.SLID || e.DLID != w.DLID || e.Src != src || !slices.Contains(at, e.Reason) {
			t.Errorf("example %d: %+v, want %s (LID %d) -> LID %d: one of %q", i, e, src, w.SLID, w.DLID, at)
		}
	}
}

// checkCycle checks that a reported cycle is a cycle of channels in the
// fabric (each enters the switch the next leaves), that every dependency
// on it is one the reference found, and that its names show the switches
// and ports.
func checkCycle(t *testing.T, g *fabric.Graph, ce *cdg.CycleError, ref *enginetest.RefReport) {
	t.Helper()
	if len(ce.Channels) == 0 || len(ce.Channels) != len(ce.VLs) || len(ce.Names) != len(ce.Channels) {
		t.Fatalf("malformed cycle %+v", ce)
	}
	vs := make([]enginetest.VChan, len(ce.Channels))
	for i, c := range ce.Channels {
		next := ce.Channels[(i+1)%len(ce.Channels)]
		if g.Head[c] != g.Tail[next] {
			t.Errorf("cycle is not a walk: %s then %s", g.ChannelName(c), g.ChannelName(next))
		}
		name := ce.Names[i]
		for _, part := range []string{
			fmt.Sprintf("VL%d ", ce.VLs[i]),
			fmt.Sprintf("%q[%d]", g.SwitchName(g.Tail[c]), g.OutPort[c]),
			fmt.Sprintf("%q[%d]", g.SwitchName(g.Head[c]), g.InPort[c]),
		} {
			if !strings.Contains(name, part) {
				t.Errorf("cycle entry %q does not name %s", name, part)
			}
		}
		vs[i] = enginetest.VChan{Channel: c, VL: ce.VLs[i]}
	}
	if ref != nil && !ref.IsCycle(vs) {
		t.Errorf("cycle %v uses dependencies the reference does not have", ce)
	}
}

func TestVerifyAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 17))
	trials := 150
	if testing.Short() {
		trials = 30
	}
	var cyclic, acyclic, undelivered, cross int
	for _, fc := range refFabrics(t) {
		t.Run(fc.name, func(t *testing.T) {
			g := fc.g
			for trial := 0; trial < trials; trial++ {
				r := randomRouting(g, rng)
				opt := cdg.Options{
					SwitchSources:  rng.IntN(3) == 0,
					SwitchDelivery: rng.IntN(2) == 0,
					MaxExamples:    1 + rng.IntN(12),
					Workers:        1 + rng.IntN(4),
				}
				rep, err := cdg.Verify(g, r, opt)
				if rep == nil {
					t.Fatal(err)
				}
				ref := enginetest.Reference(g, r, enginetest.RefOptions{SwitchSources: opt.SwitchSources, SwitchDelivery: opt.SwitchDelivery})
				compareWithReference(t, g, rep, ref, opt.MaxExamples)
				// The report does not depend on the number of workers.
				opt.Workers = 5 - opt.Workers
				rep2, _ := cdg.Verify(g, r, opt)
				if !reflect.DeepEqual(rep, rep2) {
					t.Errorf("trial %d: the report changes with the number of workers:\n%s\n%s", trial, rep, rep2)
				}
				if t.Failed() {
					t.Fatalf("trial %d (options %+v):\n%s", trial, opt, rep)
				}
				switch {
				case rep.Cycle != nil:
					cyclic++
				default:
					acyclic++
				}
				if rep.Delivered < rep.Pairs {
					undelivered++
				}
				if rep.CrossVL > 0 {
					cross++
				}
			}
		})
	}
	t.Logf("routings: %d cyclic, %d acyclic, %d with undelivered pairs, %d with cross-VL dependencies", cyclic, acyclic, undelivered, cross)
	if !testing.Short() && (cyclic < 50 || acyclic < 50 || undelivered < 50 || cross < 50) {
		t.Errorf("weak sample: %d cyclic, %d acyclic, %d undelivered, %d cross-VL", cyclic, acyclic, undelivered, cross)
	}
}

// TestCorpusPresent makes a missing corpus loud (the reference comparison
// quietly falls back on generated fabrics).
func TestCorpusPresent(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("SKIP LOUDLY: ibnetdiscover corpus not found at %s: %v", corpusDir, err)
	}
}
