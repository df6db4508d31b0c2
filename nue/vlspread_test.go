package nue

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// layers=N routes what N VLs would route and deals each layer's paths over
// its share of the VL limit: the LFTs are those of k = N, every path keeps
// a VL of its own layer's run, every VL carries paths, one destination's
// sources use several VLs, and the tables verify at the limit.
func TestLayersSpreadVLs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tp     func() (*topo.Topology, error)
		layers int
		runs   []int // first VL of each layer's run, and the limit last
	}{
		{"fattree-4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }, 2, []int{0, 4, 8}},
		{"torus-4x4x4", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4, 4}, 2, false) }, 3, []int{0, 3, 6, 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tp, err := tc.tp()
			g := build(t, tp, err)
			limit := tc.runs[len(tc.runs)-1]
			base, _, err := routeKV(g, routing.Options{MaxVLs: tc.layers}, nil)
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := routeKV(g, routing.Options{MaxVLs: limit}, map[string]string{"layers": layersString(tc.layers)})
			if err != nil {
				t.Fatal(err)
			}
			if rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: limit, SwitchDelivery: true}); err != nil {
				t.Fatalf("%v\n%s", err, rep)
			}
			if r.NumVLs != limit || base.NumVLs != tc.layers {
				t.Fatalf("VLs: %d spread, %d unspread; want %d and %d", r.NumVLs, base.NumVLs, limit, tc.layers)
			}
			used := make([]bool, limit)
			spreadDests := 0
			for _, d := range g.Terms {
				if d.Switch < 0 {
					continue
				}
				L := int(base.SL.ByDest[d.LID])
				seen := map[int]bool{}
				for s := int32(0); int(s) < g.NumSwitches(); s++ {
					if r.Port(s, int(d.LID)) != base.Port(s, int(d.LID)) {
						t.Fatalf("switch %d, LID %d: port %d, want %d as with %d VLs", s, d.LID, r.Port(s, int(d.LID)), base.Port(s, int(d.LID)), tc.layers)
					}
					vl := int(r.SL.Of(s, 0, int(d.LID)))
					if vl < tc.runs[L] || vl >= tc.runs[L+1] {
						t.Fatalf("switch %d to LID %d: VL %d outside layer %d's VLs %d..%d", s, d.LID, vl, L, tc.runs[L], tc.runs[L+1]-1)
					}
					used[vl], seen[vl] = true, true
				}
				if len(seen) > 1 {
					spreadDests++
				}
			}
			for vl, u := range used {
				if !u {
					t.Errorf("VL %d carries no path", vl)
				}
			}
			if spreadDests == 0 {
				t.Error("no destination's sources use more than one VL")
			}
			again, _, err := routeKV(g, routing.Options{MaxVLs: limit, Workers: 2}, map[string]string{"layers": layersString(tc.layers)})
			if err != nil {
				t.Fatal(err)
			}
			if !lft.Equal(r, again) {
				t.Error("two runs gave different tables")
			}
		})
	}
}

// The parameter: all is the default, a count outside 1..15 is refused,
// and as many layers as VLs change nothing.
func TestLayersParam(t *testing.T) {
	for _, bad := range []string{"0", "16", "-1", "two", ""} {
		if _, err := ParseConfig(Config{}, map[string]string{"layers": bad}); err == nil {
			t.Errorf("layers=%q accepted", bad)
		}
	}
	c, err := ParseConfig(Config{}, map[string]string{"layers": "all"})
	if err != nil || c.Layers != 0 {
		t.Fatalf("layers=all: %+v, %v", c, err)
	}
	tp, err := topo.FatTree(4, 2, 0)
	g := build(t, tp, err)
	plain, _, err := routeKV(g, routing.Options{MaxVLs: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	four, _, err := routeKV(g, routing.Options{MaxVLs: 4}, map[string]string{"layers": "4"})
	if err != nil {
		t.Fatal(err)
	}
	if !lft.Equal(plain, four) {
		t.Error("layers=4 at 4 VLs differs from the default")
	}
	if err := SpreadVLs(g, plain.Clone(), 2); err == nil {
		t.Error("spreading 4 layers over 2 VLs accepted")
	}
	if _, _, err := (Engine{Config: Config{Layers: 2}}).RouteStats(context.Background(), g, routing.Options{MaxVLs: 8}); err != nil {
		t.Fatal(err)
	}
}
