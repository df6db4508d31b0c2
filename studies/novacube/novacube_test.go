package novacube

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

func analyse(t *testing.T, kind string, k, n int) *Props {
	t.Helper()
	p, err := Analyse(kind, k, n)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Links (eq. 11, and the 4096-node examples of §4.2.6), diameters (eq. 3
// where it holds; BFS gives ⌈⌈k/2⌉·n/2⌉ where it does not) and the 2D
// average path length of eq. 10 (Table 2: 3.06 for 8×8).
func TestPropsAgainstPaper(t *testing.T) {
	for _, c := range []struct {
		k, n, links, diam int
		eq3               bool
	}{
		{4, 2, 40, 2, true}, {6, 2, 90, 3, true}, {8, 2, 160, 4, true}, {10, 2, 250, 5, true},
		{4, 3, 224, 3, true}, {8, 3, 1792, 6, true},
		{5, 2, 58, 3, false}, {7, 2, 116, 4, false}, {5, 3, 407, 5, false}, {9, 3, 2443, 8, false},
	} {
		p := analyse(t, "novacube", c.k, c.n)
		if p.Links != c.links || p.LinksFormula != c.links {
			t.Errorf("k=%d n=%d: %d links (eq. 11: %d), want %d", c.k, c.n, p.Links, p.LinksFormula, c.links)
		}
		if p.Diameter != c.diam || (p.DiameterFormula == c.diam) != c.eq3 {
			t.Errorf("k=%d n=%d: diameter %d (eq. 3: %d), want %d (eq. 3 right: %v)", c.k, c.n, p.Diameter, p.DiameterFormula, c.diam, c.eq3)
		}
		if up := (c.k + 1) / 2; p.Diameter != (up*c.n+1)/2 {
			t.Errorf("k=%d n=%d: diameter %d, want ⌈⌈k/2⌉·n/2⌉ = %d", c.k, c.n, p.Diameter, (up*c.n+1)/2)
		}
		if c.n == 2 && c.k%2 == 0 && math.Abs(p.APL-p.APLFormula) > 1e-9 {
			t.Errorf("k=%d: APL %v, eq. 10 %v", c.k, p.APL, p.APLFormula)
		}
		tp := analyse(t, "torus", c.k, c.n)
		if tp.Links != c.n*ipow(c.k, c.n) || tp.Diameter != (c.k/2)*c.n || tp.Diameter != tp.DiameterFormula {
			t.Errorf("torus k=%d n=%d: %d links, diameter %d", c.k, c.n, tp.Links, tp.Diameter)
		}
		if p.APL >= tp.APL || p.Diameter >= tp.Diameter {
			t.Errorf("k=%d n=%d: NovaCube (APL %v, D %d) not below the torus (%v, %d)", c.k, c.n, p.APL, p.Diameter, tp.APL, tp.Diameter)
		}
	}
	if p := analyse(t, "novacube", 8, 2); math.Round(p.APL*100)/100 != 3.06 {
		t.Errorf("8x8 APL %.4f, Table 2 says 3.06", p.APL)
	}
	// Table 2's 3D 64-node APL (1.82) is below what any routing can reach:
	// BFS gives 2.44.
	if p := analyse(t, "novacube", 4, 3); math.Abs(p.APL-22.0/9) > 1e-9 {
		t.Errorf("4x4x4 APL %v, want 22/9", p.APL)
	}
	if testing.Short() {
		return
	}
	for _, c := range [][3]int{{64, 2, 10240}, {16, 3, 14336}} {
		if p := analyse(t, "novacube", c[0], c[1]); p.Links != c[2] {
			t.Errorf("4096-node %dD: %d links, §4.2.6 says %d", c[1], p.Links, c[2])
		}
	}
}

// Eq. 4 is the dimension cut; a diagonal cut of 8×8 is smaller (32 cables
// against 48), so eq. 7's bound is optimistic.
func TestBisection(t *testing.T) {
	p := analyse(t, "novacube", 8, 2)
	if p.BisectionFormula != 48 || p.BisectionDimCut != 48 || p.BisectionBest != 32 {
		t.Errorf("8x8 NovaCube: eq. 4 %d, dimension cut %d, best %d; want 48, 48, 32", p.BisectionFormula, p.BisectionDimCut, p.BisectionBest)
	}
	if p.ThroughputFormula != 3 || p.ThroughputCut != 2 || p.ThroughputChannel >= p.ThroughputCut {
		t.Errorf("8x8 NovaCube throughput bounds: eq. 7 %v, cut %v, channel %v", p.ThroughputFormula, p.ThroughputCut, p.ThroughputChannel)
	}
	tp := analyse(t, "torus", 8, 2)
	if tp.BisectionFormula != 16 || tp.BisectionBest != 16 || tp.ThroughputFormula != 1 || tp.ThroughputCut != 1 {
		t.Errorf("8x8 torus: %+v", tp)
	}
	if _, err := Analyse("ring", 4, 2); err == nil {
		t.Error("unknown kind accepted")
	}
	if _, err := Analyse("novacube", 2, 2); err == nil {
		t.Error("k=2 accepted")
	}
}

// The Cube model is the generated fabric: same distances.
func TestCubeMatchesGenerator(t *testing.T) {
	for _, c := range [][2]int{{4, 2}, {5, 2}, {7, 2}, {4, 3}, {5, 3}} {
		cube, err := NewCube(c[0], c[1], true)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for s := 0; s < cube.Nodes(); s++ {
			for _, d := range cube.BFS(s) {
				sum += d
			}
		}
		apl := float64(sum) / float64(cube.Nodes()*(cube.Nodes()-1))
		if p := analyse(t, "novacube", c[0], c[1]); math.Abs(p.APL-apl) > 1e-9 {
			t.Errorf("k=%d n=%d: cube APL %v, fabric %v", c[0], c[1], apl, p.APL)
		}
	}
	if _, err := NewCube(2, 2, true); err == nil {
		t.Error("k=2 accepted")
	}
}

// Fig. 4: S's neighbours at Δ = 4, 4, 6, 6 and M at 3 get 21.43 %,
// 21.43 %, 9.524 %, 9.524 % and 38.10 %.
func TestPORAProbabilitiesFig4(t *testing.T) {
	c, _ := NewCube(8, 2, true)
	at := func(x, y int) int { return x + 8*y }
	r := newRouter(c, at(2, 3), Literal)
	want := map[int]float64{at(1, 0): 0.2143, at(0, 1): 0.2143, at(7, 0): 0.09524, at(0, 7): 0.09524, at(4, 4): 0.3810}
	hs := r.next(nil, at(0, 0), modeSrc, 0)
	if len(hs) != 5 {
		t.Fatalf("%d candidates, want 5", len(hs))
	}
	for _, h := range hs {
		w := c.dest(at(0, 0), h.slot)
		if math.Abs(h.p-want[w]) > 5e-5 {
			t.Errorf("neighbour %d: p = %.5f, want %.5f", w, h.p, want[w])
		}
	}
}

// The Tables and Minimal readings are shortest paths on even k; the
// literal rule is longer (its first hop may move away).
func TestExpectedAPL(t *testing.T) {
	for _, k := range []int{4, 6, 8} {
		c, _ := NewCube(k, 2, true)
		bfs := analyse(t, "novacube", k, 2).APL
		lit, mn, tb := ExpectedAPL(c, Literal), ExpectedAPL(c, Minimal), ExpectedAPL(c, Tables)
		if math.Abs(mn-bfs) > 1e-9 || math.Abs(tb-bfs) > 1e-9 || lit <= bfs {
			t.Errorf("k=%d: literal %v, minimal %v, tables %v, BFS %v", k, lit, mn, tb, bfs)
		}
	}
	c, _ := NewCube(5, 2, true)
	if mn, bfs := ExpectedAPL(c, Minimal), analyse(t, "novacube", 5, 2).APL; math.Abs(mn-bfs) > 1e-9 {
		t.Errorf("5x5 minimal %v, BFS %v", mn, bfs)
	}
}

// The Tables reading is the pora engine: same next hop for every pair.
func TestTablesMatchEngine(t *testing.T) {
	for _, c := range [][2]int{{5, 2}, {8, 2}, {4, 3}} {
		tp, err := topo.NovaCube(c[0], c[1], 1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		e, err := routing.Lookup("pora")
		if err != nil {
			t.Fatal(err)
		}
		rt, err := e.Route(context.Background(), g, routing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cube, _ := NewCube(c[0], c[1], true)
		checkSameNext(t, g, rt, cube)
	}
}

func checkSameNext(t *testing.T, g *fabric.Graph, rt *lft.Routing, cube *Cube) {
	t.Helper()
	S := g.NumSwitches()
	for d := 0; d < S; d++ {
		r := newRouter(cube, d, Tables)
		lid := int(g.SwitchLID(int32(d)))
		for u := 0; u < S; u++ {
			if u == d {
				continue
			}
			ch := g.ChannelAt(int32(u), rt.Port(int32(u), lid))
			want := cube.dest(u, r.next(nil, u, modeSrc, 0)[0].slot)
			if ch < 0 || int(g.Head[ch]) != want {
				t.Fatalf("k=%d: at %d towards %d the engine and the model differ", cube.K, u, d)
			}
		}
	}
}

// The paper's two dateline VCs leave literal PORA cyclic on every size.
func TestAuditPaperScheme(t *testing.T) {
	for _, k := range [][2]int{{4, 2}, {5, 2}, {8, 2}, {4, 3}} {
		cube, _ := NewCube(k[0], k[1], true)
		r, err := Audit(cube, Literal, Paper)
		if err != nil {
			t.Fatal(err)
		}
		if r.Acyclic || r.CycleLen < 2 || len(r.Cycle) == 0 {
			t.Errorf("k=%d n=%d: literal PORA under the paper's dateline VCs: acyclic %v, cycle of %d", k[0], k[1], r.Acyclic, r.CycleLen)
		}
	}
	if _, err := Audit(&Cube{}, Literal, Scheme{Name: "x"}); err == nil {
		t.Error("scheme without a rule accepted")
	}
	big, _ := NewCube(9, 3, true)
	if _, err := Audit(big, Literal, One); err == nil {
		t.Error("a 729-node audit accepted")
	}
	if _, err := MinClasses(big, Literal); err == nil {
		t.Error("a 729-node class search accepted")
	}
}

// The audit's CDG of the Tables reading on one VC has exactly the
// dependencies cdg.Verify finds in the engine's tables merged onto one VL.
func TestAuditMatchesVerifier(t *testing.T) {
	for _, c := range [][2]int{{5, 2}, {8, 2}, {4, 3}} {
		tp, _ := topo.NovaCube(c[0], c[1], 1)
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := routing.Lookup("pora")
		rt, err := e.Route(context.Background(), g, routing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rep, _ := cdg.Verify(g, CollapseVLs(rt, 1), cdg.Options{})
		cube, _ := NewCube(c[0], c[1], true)
		a, err := Audit(cube, Tables, One)
		if err != nil {
			t.Fatal(err)
		}
		if rep == nil || rep.CDGEdges != a.Edges || (rep.Cycle == nil) != a.Acyclic {
			t.Errorf("k=%d n=%d: verifier %d deps (cyclic %v), audit %d (acyclic %v)", c[0], c[1], rep.CDGEdges, rep.Cycle != nil, a.Edges, a.Acyclic)
		}
	}
}

// ExpectedAPL's recursion against sampled walks of the literal rule.
func TestExpectedAPLSampled(t *testing.T) {
	c, _ := NewCube(6, 2, true)
	rng := rand.New(rand.NewPCG(7, 9))
	const walks = 40000
	total := 0
	for i := 0; i < walks; i++ {
		s, d := rng.IntN(c.Nodes()), rng.IntN(c.Nodes()-1)
		if d >= s {
			d++
		}
		r := newRouter(c, d, Literal)
		u, mode, quad := s, modeSrc, 0
		for u != d {
			hs := r.next(nil, u, mode, quad)
			x, h := rng.Float64(), hs[len(hs)-1]
			for _, cand := range hs {
				if x < cand.p {
					h = cand
					break
				}
				x -= cand.p
			}
			u, mode, quad = c.dest(u, h.slot), h.mode, h.quad
			total++
		}
	}
	got, want := float64(total)/walks, ExpectedAPL(c, Literal)
	if math.Abs(got-want) > 0.03 {
		t.Errorf("sampled literal APL %.4f, exact %.4f", got, want)
	}
}
