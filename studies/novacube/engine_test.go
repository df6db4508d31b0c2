package novacube

import (
	"context"
	"errors"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

func novaGraph(t *testing.T, k, n, hosts int) *fabric.Graph {
	t.Helper()
	tp, err := topo.NovaCube(k, n, hosts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// switchDist is the reference: BFS hop distances in the switch graph.
func switchDist(g *fabric.Graph, src int32) []int {
	d := make([]int, g.NumSwitches())
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	q := []int32{src}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for c := g.Off[u]; c < g.Off[u+1]; c++ {
			if v := g.Head[c]; d[v] < 0 {
				d[v] = d[u] + 1
				q = append(q, v)
			}
		}
	}
	return d
}

// PORA tables pass cdg.Verify with the VLs they claim, and every VL
// scheme of the engine with fewer VLs is cyclic (so is merging all VLs
// into one): 2 VLs for even k >= 6 and for 4x4x4, 4 for odd k >= 5 in 2D
// and 3D (both 2-VL schemes, dateline and late-jump layer, are cyclic),
// and 1 for 4x4 (its jump links replace every 2-hop ring path that
// could close a cycle) and k = 3.
func TestPORATablesVerified(t *testing.T) {
	for _, c := range []struct{ k, n, vls int }{
		{4, 2, 1}, {6, 2, 2}, {8, 2, 2}, {4, 3, 2}, {5, 2, 4}, {7, 2, 4}, {5, 3, 4}, {3, 3, 1}, {6, 1, 2},
	} {
		g := novaGraph(t, c.k, c.n, 1)
		r, err := PORA{}.Route(context.Background(), g, routing.Options{})
		if err != nil {
			t.Fatalf("k=%d n=%d: %v", c.k, c.n, err)
		}
		if r.NumVLs != c.vls {
			t.Errorf("k=%d n=%d: %d VLs, want %d", c.k, c.n, r.NumVLs, c.vls)
		}
		rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: c.vls, SwitchDelivery: true})
		if err != nil {
			t.Fatalf("k=%d n=%d: %v\n%s", c.k, c.n, err, rep)
		}
		if c.vls > 1 {
			if rep, _ := cdg.Verify(g, CollapseVLs(r, 1), cdg.Options{}); rep == nil || rep.Cycle == nil {
				t.Errorf("k=%d n=%d: with 1 VL the CDG should be cyclic", c.k, c.n)
			}
		}
		nt, _ := recogniseNova(g, "pora")
		pl := nt.plan(g)
		for _, sc := range poraSchemes {
			if sc.vls() >= c.vls || (sc.dateline && c.k < 4) || (sc.layered && !pl.midJump) {
				continue
			}
			fr, err := nt.tables(context.Background(), g, pl, sc, routing.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if rep, _ := cdg.Verify(g, fr, cdg.Options{}); rep == nil || rep.Cycle == nil {
				t.Errorf("k=%d n=%d: scheme %+v with %d VLs should be cyclic", c.k, c.n, sc, sc.vls())
			}
		}
	}
}

// For even k the tables are shortest NovaCube paths with the jump only as
// the first hop; for odd k every hop still lowers the Lee distance.
func TestPORAPaths(t *testing.T) {
	for _, c := range [][2]int{{4, 2}, {8, 2}, {6, 3}, {5, 2}, {7, 2}} {
		g := novaGraph(t, c[0], c[1], 0)
		nt, err := recogniseNova(g, "pora")
		if err != nil {
			t.Fatal(err)
		}
		pl := nt.plan(g)
		S := g.NumSwitches()
		for s := int32(0); int(s) < S; s++ {
			ref := switchDist(g, s)
			for d := int32(0); int(d) < S; d++ {
				hops := 0
				for u := s; u != d; hops++ {
					v := pl.next(g, u, d)
					if nt.cube.Lee(int(nt.node[v]), int(nt.node[d])) >= nt.cube.Lee(int(nt.node[u]), int(nt.node[d])) && v != d {
						t.Fatalf("k=%d: hop %s->%s towards %s does not lower the Lee distance", c[0], nt.label(u), nt.label(v), nt.label(d))
					}
					if _, _, reg := nt.neighbour(u, v); !reg && hops > 0 && c[0]%2 == 0 {
						t.Fatalf("k=%d: jump after the first hop on %s->%s", c[0], nt.label(s), nt.label(d))
					}
					u = v
				}
				if c[0]%2 == 0 && hops != ref[d] {
					t.Fatalf("k=%d: %s->%s takes %d hops, shortest %d", c[0], nt.label(s), nt.label(d), hops, ref[d])
				}
			}
		}
	}
}

func TestPORARefusals(t *testing.T) {
	ctx := context.Background()
	tor, _ := topo.Torus([]int{4, 4}, 1, false)
	ft, _ := topo.FatTree(4, 2, 0)
	nc, _ := topo.NovaCube(6, 2, 1)
	failed, _, err := topo.InjectFailures(nc.Fabric, topo.FailureSpec{Links: 1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*fabric.Fabric{"torus": tor.Fabric, "fattree": ft.Fabric, "failed novacube": failed} {
		g, err := fabric.Compile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (PORA{}).Route(ctx, g, routing.Options{}); !errors.Is(err, routing.ErrNotApplicable) {
			t.Errorf("%s: %v, want routing.ErrNotApplicable", name, err)
		}
	}
	var ve *routing.VLError
	if _, err := (PORA{}).Route(ctx, novaGraph(t, 6, 2, 1), routing.Options{MaxVLs: 1}); !errors.As(err, &ve) || ve.Needed != 2 {
		t.Errorf("6x6 at 1 VL: %v, want a VLError needing 2", err)
	}
	if _, err := (PORA{}).Route(ctx, novaGraph(t, 5, 2, 1), routing.Options{MaxVLs: 2}); !errors.As(err, &ve) || ve.Needed != 4 {
		t.Errorf("5x5 at 2 VLs: %v, want a VLError needing 4", err)
	}
	if _, err := routing.Configure(PORA{}, map[string]string{"x": "1"}); err == nil {
		t.Error("unknown parameter accepted")
	}
}
