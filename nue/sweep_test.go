package nue

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// routeBoth routes g with the sweep (under cfg and tune) and without it
// (Dijkstra only) and fails unless the tables are identical; it returns
// the sweep run's stats.
func routeBoth(t *testing.T, name string, g *fabric.Graph, opt routing.Options, cfg Config, tune tuning) *Stats {
	t.Helper()
	e := Engine{Config: cfg}
	a, st, err := e.routeTuned(context.Background(), g, opt, tune, 1)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	tune.noSweep = true
	b, stb, err := e.routeTuned(context.Background(), g, opt, tune, 1)
	if err != nil {
		t.Fatalf("%s without the sweep: %v", name, err)
	}
	if !lft.Equal(a, b) {
		t.Fatalf("%s: the sweep routes differently from the Dijkstra", name)
	}
	for i := range stb.Layers {
		x, y := st.Layers[i], stb.Layers[i]
		x.Sweeps = 0
		if x != y {
			t.Fatalf("%s layer %d: stats %+v with the sweep, %+v without", name, i, x, y)
		}
		if y.Sweeps != 0 {
			t.Fatalf("%s layer %d: %d sweeps with the sweep off", name, i, y.Sweeps)
		}
	}
	return st
}

func sweeps(st *Stats) (n, searches int) {
	for _, l := range st.Layers {
		n += l.Sweeps
		searches += l.Searches
	}
	return n, searches
}

// TestSweepMatchesDijkstra: the sweep is an exact shortcut of the Dijkstra
// (sweep.go), so tables and statistics must be identical with and without
// it, on every family, with link failures, shared and unshared searches,
// and with the rows built per layer instead of shared.
func TestSweepMatchesDijkstra(t *testing.T) {
	t.Parallel()
	// Sweep every search, even where it mostly gives up (tori): each
	// way of giving up must leave the Dijkstra's result.
	tune := defaultTuning()
	tune.sweepProbe = 1 << 30
	swept := 0
	larger := []struct {
		name string
		gen  func() (*topo.Topology, error)
	}{
		{"fattree6-3", func() (*topo.Topology, error) { return topo.FatTree(6, 3, 0) }},
		{"torus6x6x3", func() (*topo.Topology, error) { return topo.Torus([]int{6, 6, 3}, 2, false) }},
		{"random64", func() (*topo.Topology, error) { return topo.Random(64, 6, 2, 5) }},
		{"dragonfly3", func() (*topo.Topology, error) { return topo.Dragonfly(3, 6, 3, 0) }},
	}
	for _, fam := range append(larger, families...) {
		tp, err := fam.gen()
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []float64{0, 0.03} {
			f := tp.Fabric
			if frac > 0 {
				nl := max(1, int(frac*float64(len(tp.Fabric.Links()))+0.5))
				if f, _, err = topo.InjectFailures(tp.Fabric, topo.FailureSpec{Links: nl, Seed: 7}); err != nil {
					t.Fatalf("%s: %v", fam.name, err)
				}
			}
			g, err := fabric.Compile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []int{1, 2, 8} {
				for _, share := range []string{"auto", "none"} {
					name := fmt.Sprintf("%s/fail%.0f%%/k=%d/share=%s", fam.name, frac*100, k, share)
					st := routeBoth(t, name, g, routing.Options{MaxVLs: k}, Config{Share: Share(share)}, tune)
					n, _ := sweeps(st)
					swept += n
				}
			}
		}
	}
	if swept == 0 {
		t.Fatal("no search was done by the sweep")
	}
	// Rows built by each layer as needed (fabrics too large to share them).
	tune.maxLevelBytes = 0
	for _, fam := range families[:4] {
		tp, err := fam.gen()
		g := build(t, tp, err)
		for _, k := range []int{1, 4} {
			routeBoth(t, fmt.Sprintf("%s/own rows/k=%d", fam.name, k), g, routing.Options{MaxVLs: k}, Config{}, tune)
		}
	}
}

// TestSweepParallelCables: where two switches are joined by several
// cables, equal offers over them go to the one the Dijkstra relaxes first;
// tori with a dimension of size 2 and the sample dumps (every switch pair
// of hpc-cluster-2014 shares several cables) with every search swept.
func TestSweepParallelCables(t *testing.T) {
	t.Parallel()
	tune := defaultTuning()
	tune.sweepProbe = 1 << 30
	var gs []*fabric.Graph
	var names []string
	for _, dims := range [][]int{{2, 2, 2}, {3, 3, 2}, {4, 2}} {
		tp, err := topo.Torus(dims, 2, false)
		gs, names = append(gs, build(t, tp, err)), append(names, fmt.Sprintf("torus%v", dims))
	}
	res, err := ibnetdiscover.Parse(strings.NewReader(crossedCables), "crossed")
	gs, names = append(gs, compileParsed(t, res, err)), append(names, "crossed")
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", "ibnetdiscover", "*.topo"))
	if len(files) == 0 {
		t.Log("SKIPPING the sample dumps: ../shared absent")
	}
	for _, file := range files {
		gs, names = append(gs, compileDump(t, file)), append(names, filepath.Base(file))
	}
	for i, g := range gs {
		for _, k := range []int{1, 2, 8} {
			for _, share := range []Share{ShareAuto, ShareNone, ShareSwitch} {
				routeBoth(t, fmt.Sprintf("%s/k=%d/share=%s", names[i], k, share), g, routing.Options{MaxVLs: k}, Config{Share: share}, tune)
			}
		}
	}
}

// crossedCables: three switches in a line, A and B joined by two cables
// whose port orders cross (A's lower port meets B's higher one), two CAs
// on every switch.
const crossedCables = `
switchguid=0x0000000000000a00
Switch 8 "S-0000000000000a00" # "A" base port 0 lid 1 lmc 0
[1] "H-0000000000000a10"[1](0000000000000a11) # "host" lid 2 4xSDR
[2] "H-0000000000000a20"[1](0000000000000a21) # "host" lid 3 4xSDR
[3] "S-0000000000000b00"[5] # "B" lid 4 4xSDR
[4] "S-0000000000000b00"[4] # "B" lid 4 4xSDR

switchguid=0x0000000000000b00
Switch 8 "S-0000000000000b00" # "B" base port 0 lid 4 lmc 0
[1] "H-0000000000000b10"[1](0000000000000b11) # "host" lid 5 4xSDR
[2] "H-0000000000000b20"[1](0000000000000b21) # "host" lid 6 4xSDR
[4] "S-0000000000000a00"[4] # "A" lid 1 4xSDR
[5] "S-0000000000000a00"[3] # "A" lid 1 4xSDR
[6] "S-0000000000000c00"[3] # "C" lid 7 4xSDR
[7] "S-0000000000000c00"[4] # "C" lid 7 4xSDR

switchguid=0x0000000000000c00
Switch 8 "S-0000000000000c00" # "C" base port 0 lid 7 lmc 0
[1] "H-0000000000000c10"[1](0000000000000c11) # "host" lid 8 4xSDR
[2] "H-0000000000000c20"[1](0000000000000c21) # "host" lid 9 4xSDR
[3] "S-0000000000000b00"[6] # "B" lid 4 4xSDR
[4] "S-0000000000000b00"[7] # "B" lid 4 4xSDR

caguid=0x0000000000000a10
Ca 1 "H-0000000000000a10" # "host"
[1](0000000000000a11) "S-0000000000000a00"[1] # lid 2 lmc 0 "A" lid 1 4xSDR

caguid=0x0000000000000a20
Ca 1 "H-0000000000000a20" # "host"
[1](0000000000000a21) "S-0000000000000a00"[2] # lid 3 lmc 0 "A" lid 1 4xSDR

caguid=0x0000000000000b10
Ca 1 "H-0000000000000b10" # "host"
[1](0000000000000b11) "S-0000000000000b00"[1] # lid 5 lmc 0 "B" lid 4 4xSDR

caguid=0x0000000000000b20
Ca 1 "H-0000000000000b20" # "host"
[1](0000000000000b21) "S-0000000000000b00"[2] # lid 6 lmc 0 "B" lid 4 4xSDR

caguid=0x0000000000000c10
Ca 1 "H-0000000000000c10" # "host"
[1](0000000000000c11) "S-0000000000000c00"[1] # lid 8 lmc 0 "C" lid 7 4xSDR

caguid=0x0000000000000c20
Ca 1 "H-0000000000000c20" # "host"
[1](0000000000000c21) "S-0000000000000c00"[2] # lid 9 lmc 0 "C" lid 7 4xSDR
`

// TestSweepCases: SAR jobs (their weights exceed the sweep's bound, so it
// gives up on loaded channels), LMC, and the fat tree, where every
// terminal LID's search is a sweep.
func TestSweepCases(t *testing.T) {
	t.Parallel()
	tune := defaultTuning()
	tp, err := topo.Torus([]int{4, 4, 2}, 3, false)
	g := build(t, tp, err)
	jobs := []routing.Job{{ID: "1", Terms: []int32{0, 1, 2, 5, 9}}, {ID: "2", Terms: []int32{3, 4, 20, 21}}}
	for _, k := range []int{1, 4} {
		routeBoth(t, fmt.Sprintf("torus SAR k=%d", k), g, routing.Options{MaxVLs: k, SAR: true, Jobs: jobs}, Config{}, tune)
	}

	tp, err = topo.FatTree(4, 3, 0)
	ft := build(t, tp, err)
	st := routeBoth(t, "fattree4-3 SAR", ft, routing.Options{MaxVLs: 4, SAR: true, Jobs: jobs}, Config{}, tune)
	if n, _ := sweeps(st); n == 0 {
		t.Error("fat tree with SAR jobs: no sweep (the jobs' own loads stay within the bound)")
	}
	for _, k := range []int{1, 8} {
		st := routeBoth(t, fmt.Sprintf("fattree4-3 k=%d", k), ft, routing.Options{MaxVLs: k}, Config{}, tune)
		if n, _ := sweeps(st); n < len(ft.Terms) {
			t.Errorf("fat tree k=%d: %d sweeps, want one at least per terminal LID (%d): its paths are shortest paths", k, n, len(ft.Terms))
		}
	}

	routeBoth(t, "fattree4-3 lmc1", withLMC(t, tp.Fabric, 1), routing.Options{MaxVLs: 3}, Config{}, tune)
}

// TestSweepHeavyLoad: with a small initial weight, load outweighs path
// length and the Dijkstra takes longer, less loaded paths; the sweep must
// notice (its bound on the loads) and leave those searches to it.
func TestSweepHeavyLoad(t *testing.T) {
	t.Parallel()
	tune := defaultTuning()
	tune.sweepProbe = 1 << 30
	for _, w0 := range []int64{1, 20, 500} {
		tune.w0 = w0
		for _, fam := range families[6:10] {
			tp, err := fam.gen()
			g := build(t, tp, err)
			for _, k := range []int{1, 4} {
				routeBoth(t, fmt.Sprintf("%s/w0=%d/k=%d", fam.name, w0, k), g, routing.Options{MaxVLs: k}, Config{}, tune)
			}
		}
	}
}

// TestLevelRows checks the rows against a plain breadth-first search.
func TestLevelRows(t *testing.T) {
	tp, err := topo.Random(30, 4, 1, 3)
	g := build(t, tp, err)
	rows := newLevelRows(g, defaultTuning().maxLevelBytes)
	S := g.NumSwitches()
	dist, q, lv := make([]int32, S), make([]int32, S), make([]int32, S)
	for s := int32(0); int(s) < S; s++ {
		g.BFS(s, dist, q)
		r := rows.row(s, lv)
		n := 0
		for _, d := range dist {
			if d >= 0 {
				n++
			}
		}
		if len(r.order) != n {
			t.Fatalf("row %d: %d switches, BFS reaches %d", s, len(r.order), n)
		}
		for h := 0; h+1 < len(r.start); h++ {
			for _, v := range r.order[r.start[h]:r.start[h+1]] {
				if int(dist[v]) != h {
					t.Fatalf("row %d: switch %d at level %d, BFS says %d", s, v, h, dist[v])
				}
				for c := g.Off[v]; c < g.Off[v+1]; c++ {
					par := r.parOf(v)>>uint(c-g.Off[v])&1 != 0
					if par != (dist[g.Head[c]] == dist[v]-1) {
						t.Fatalf("row %d: switch %d channel %d par=%v, levels %d -> %d", s, v, c, par, dist[v], dist[g.Head[c]])
					}
				}
			}
		}
	}
}

// TestSweepResume: where a sweep stops inside a level, the Dijkstra takes
// over from the levels before it; the sweep's settling of that level must
// be taken back, since the Dijkstra settles it in (key, index) order and
// two new turns of one level can close a cycle together (which of them is
// blocked depends on that order). Random irregular fabrics with one or two
// layers make such levels common.
func TestSweepResume(t *testing.T) {
	t.Parallel()
	tune := defaultTuning()
	tune.sweepProbe = 1 << 30
	n := 40
	if testing.Short() {
		n = 10
	}
	for seed := uint64(0); seed < uint64(n); seed++ {
		sw := 12 + int(seed%5)*6
		tp, err := topo.Random(sw, 3+int(seed%4), 1+int(seed%3), seed)
		g := build(t, tp, err)
		for _, k := range []int{1, 2} {
			routeBoth(t, fmt.Sprintf("random%d/seed%d/k=%d", sw, seed, k), g, routing.Options{MaxVLs: k}, Config{Share: ShareNone}, tune)
		}
	}
}

// TestTreeFromRow: a source's shortest-path tree taken from its level row
// is the one its own search builds (order, predecessors in order, path
// counts to the bit), on fabrics with and without parallel cables.
func TestTreeFromRow(t *testing.T) {
	fabs := []struct {
		name string
		gen  func() (*topo.Topology, error)
	}{
		{"random", func() (*topo.Topology, error) { return topo.Random(30, 4, 1, 3) }},
		{"random24", func() (*topo.Topology, error) { return topo.Random(24, 3, 2, 5) }},
		{"fattree", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }},
		// a ring of 2 in one dimension: two cables between neighbours
		{"torus2x3", func() (*topo.Topology, error) { return topo.Torus([]int{2, 3}, 1, false) }},
	}
	for _, f := range fabs {
		tp, err := f.gen()
		g := build(t, tp, err)
		rows := newLevelRows(g, defaultTuning().maxLevelBytes)
		lv := make([]int32, g.NumSwitches())
		var a, b spTree
		for s := int32(0); int(s) < g.NumSwitches(); s++ {
			a.build(g, s)
			b.fromRow(g, s, rows.row(s, lv))
			if !slices.Equal(a.order, b.order) || !slices.Equal(a.pred, b.pred) || !slices.Equal(a.predOff, b.predOff) {
				t.Fatalf("%s: source %d: trees differ:\norder %v / %v\npred %v / %v\npredOff %v / %v", f.name, s, a.order, b.order, a.pred, b.pred, a.predOff, b.predOff)
			}
			for _, v := range a.order {
				if math.Float64bits(a.sigma[v]) != math.Float64bits(b.sigma[v]) {
					t.Fatalf("%s: source %d: sigma[%d] %v / %v", f.name, s, v, a.sigma[v], b.sigma[v])
				}
			}
		}
	}
}
