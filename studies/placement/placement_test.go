package placement

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func torus(t *testing.T, dims string) *Torus {
	t.Helper()
	tr, err := ParseDims(dims)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// at returns the node indices of coordinate lists.
func at(tr *Torus, cs ...[]int) []int {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = tr.Index(c)
	}
	slices.Sort(out)
	return out
}

// bfsDist is the reference: hop distance in the torus graph.
func bfsDist(tr *Torus, src int) []int {
	d := make([]int, tr.N())
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	q := []int{src}
	c := make([]int, tr.Dims())
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		for dim := range tr.K {
			for _, s := range []int{1, -1} {
				tr.Coord(u, c)
				c[dim] += s
				if v := tr.Index(c); d[v] < 0 {
					d[v] = d[u] + 1
					q = append(q, v)
				}
			}
		}
	}
	return d
}

func TestLeeDistanceVectors(t *testing.T) {
	for _, c := range []struct {
		k, a, b []int
		want    int
	}{
		{[]int{8, 8}, []int{0, 0}, []int{7, 7}, 2},
		{[]int{8, 8}, []int{1, 2}, []int{6, 5}, 6},
		{[]int{8, 8}, []int{0, 0}, []int{4, 4}, 8},
		{[]int{4, 4, 3}, []int{0, 0, 0}, []int{2, 3, 2}, 4},
		{[]int{5}, []int{1}, []int{4}, 2},
	} {
		if got := LeeDistance(c.k, c.a, c.b); got != c.want {
			t.Errorf("LeeDistance(%v, %v, %v) = %d, want %d", c.k, c.a, c.b, got, c.want)
		}
	}
}

// The Lee distance is the hop distance of the torus graph (§2.3.2).
func TestLeeDistanceIsHopDistance(t *testing.T) {
	for _, dims := range []string{"8x8", "5x4", "4x4x3", "7", "3x2x5"} {
		tr := torus(t, dims)
		for s := 0; s < tr.N(); s++ {
			ref := bfsDist(tr, s)
			for v := 0; v < tr.N(); v++ {
				if got := tr.Dist(s, v); got != ref[v] {
					t.Fatalf("%s: Dist(%s,%s) = %d, BFS %d", dims, tr.Label(s), tr.Label(v), got, ref[v])
				}
			}
		}
	}
}

// eq. 3.2 against counting the points of a ball in a torus large enough
// not to wrap, and against the closed forms of §3.1.1.
func TestSphereVolume(t *testing.T) {
	for n := 1; n <= 4; n++ {
		for r := 0; r <= 4; r++ {
			k := make([]int, n)
			for i := range k {
				k[i] = 2*r + 3
			}
			tr, err := NewTorus(k...)
			if err != nil {
				t.Fatal(err)
			}
			brute := 0
			for v := 0; v < tr.N(); v++ {
				if tr.Dist(0, v) <= r {
					brute++
				}
			}
			if got := SphereVolume(n, r); got != brute {
				t.Errorf("SphereVolume(%d, %d) = %d, brute force %d", n, r, got, brute)
			}
		}
	}
	for r := 1; r <= 6; r++ {
		if got, want := SphereVolume(2, r), 2*r*r+2*r+1; got != want {
			t.Errorf("2D t=%d: %d, want 2t²+2t+1 = %d", r, got, want)
		}
		if got, want := SphereVolume(3, r), 2*r*(2*r+1)*(r+1)/3+2*r+1; got != want {
			t.Errorf("3D t=%d: %d, want %d", r, got, want)
		}
	}
}

// checkPerfect asserts Def. 1: every node within t of exactly one I/O node.
func checkPerfect(t *testing.T, p *Placement) {
	t.Helper()
	tr := p.Torus
	for v := 0; v < tr.N(); v++ {
		c := 0
		for _, io := range p.IO {
			if tr.Dist(v, io) <= p.T {
				c++
			}
		}
		if c != 1 {
			t.Fatalf("%s t=%d: node %s within t of %d I/O nodes, want exactly 1", tr, p.T, tr.Label(v), c)
		}
	}
}

func TestPerfectQ5(t *testing.T) {
	tr := torus(t, "5x5")
	p, err := Perfect(tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	// x + 2y ≡ 0 (mod 5), SEEDS.md's valid set.
	want := at(tr, []int{0, 0}, []int{3, 1}, []int{1, 2}, []int{4, 3}, []int{2, 4})
	if !slices.Equal(p.IO, want) {
		t.Errorf("Q_5^2 I/O nodes %v, want %v", p.IO, want)
	}
	checkPerfect(t, p)
	// The text's set {21, 00, 42, 31, 12} has adjacent nodes (the erratum).
	text := at(tr, []int{2, 1}, []int{0, 0}, []int{4, 2}, []int{3, 1}, []int{1, 2})
	adj := false
	for _, a := range text {
		for _, b := range text {
			adj = adj || tr.Dist(a, b) == 1
		}
	}
	if !adj {
		t.Error("the text's Q_5^2 set should contain an adjacent pair")
	}
}

func TestPerfectQ10IsQ5Replicated(t *testing.T) {
	tr, t5 := torus(t, "10x10"), torus(t, "5x5")
	p, err := Perfect(tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	p5, _ := Perfect(t5, 1)
	if len(p.IO) != 20 || tr.MinBound(1) != 20 {
		t.Errorf("Q_10^2: %d I/O nodes, bound %d, want 20 and 20", len(p.IO), tr.MinBound(1))
	}
	is5 := p5.IsIO()
	is := p.IsIO()
	c := make([]int, 2)
	for v := 0; v < tr.N(); v++ {
		if is[v] != is5[t5.Index(tr.Coord(v, c))] {
			t.Fatalf("Q_10^2 node %s differs from its Q_5^2 image", tr.Label(v))
		}
	}
	checkPerfect(t, p)
	a, err := Assign(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range a.Loads() {
		if l != 4 {
			t.Fatalf("perfect distance-1 loads %v, want 4 each", a.Loads())
		}
	}
	if h := a.Histogram(); !slices.Equal(h, []int{0, 80}) {
		t.Errorf("histogram %v, want [0 80]", h)
	}
}

func TestPerfectCodes(t *testing.T) {
	for _, c := range []struct {
		dims string
		t    int
	}{{"6", 1}, {"10", 2}, {"5x10", 1}, {"13x13", 2}, {"25x25", 3}, {"7x7x7", 1}, {"14x7x7", 1}} {
		p, err := Perfect(torus(t, c.dims), c.t)
		if err != nil {
			t.Fatalf("%s t=%d: %v", c.dims, c.t, err)
		}
		checkPerfect(t, p)
		if st := p.Stats(); st.IO != st.Bound || st.MinIODistance != 2*c.t+1 {
			t.Errorf("%s t=%d: %d I/O nodes (bound %d), min distance %d, want the bound and 2t+1", c.dims, c.t, st.IO, st.Bound, st.MinIODistance)
		}
	}
	if _, err := Perfect(torus(t, "8x8"), 1); !errors.Is(err, ErrNoPerfect) {
		t.Errorf("8x8: %v, want ErrNoPerfect", err)
	}
	if _, err := Perfect(torus(t, "13x13x13"), 2); !errors.Is(err, ErrNoCode) {
		t.Errorf("3D t=2: %v, want ErrNoCode", err)
	}
	for _, bad := range []int{0, -1, 1 << 20} {
		if _, err := RQP(torus(t, "5x5"), bad); !errors.Is(err, ErrBadParam) {
			t.Errorf("t=%d: %v, want ErrBadParam", bad, err)
		}
	}
	if _, err := Build(torus(t, "5x5"), "magic", 1, 0); !errors.Is(err, ErrBadParam) {
		t.Errorf("unknown method: %v", err)
	}
}

// RQP t=1 on Q_8^2 gives 13 I/O nodes (§3.1.4), all others within 2.
func TestRQPQ8(t *testing.T) {
	tr := torus(t, "8x8")
	p, err := RQP(tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := at(tr, []int{0, 0}, []int{5, 0}, []int{3, 1}, []int{1, 2}, []int{6, 2}, []int{4, 3}, []int{2, 4},
		[]int{7, 4}, []int{0, 5}, []int{5, 5}, []int{3, 6}, []int{1, 7}, []int{6, 7})
	if !slices.Equal(p.IO, want) {
		t.Errorf("RQP Q_8^2 = %v, want %v", p.IO, want)
	}
	st := p.Stats()
	if st.IO != 13 || st.Bound != 13 || st.CoverRadius != 2 || st.MinIODistance != 2 {
		t.Errorf("stats %+v, want 13 I/O, bound 13, cover 2, min I/O distance 2 (Theorem 2)", st)
	}
	a, _ := Assign(p)
	sum := 0
	for _, l := range a.Loads() {
		sum += l
	}
	if h := a.Histogram(); sum != 51 || !slices.Equal(h, []int{0, 46, 5}) {
		t.Errorf("loads %v (sum %d), histogram %v; want 51 compute nodes, [0 46 5]", a.Loads(), sum, h)
	}
}

// The k mod p = 1 case (§3.1.5): Q_6^2 from Q_3^2 replicated, no adjacent
// I/O nodes, whereas the plain cut of Q_10^2 has them.
func TestRQPQ6Special(t *testing.T) {
	tr := torus(t, "6x6")
	p, err := RQP(tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := at(tr, []int{0, 0}, []int{3, 0}, []int{1, 2}, []int{4, 2}, []int{0, 3}, []int{3, 3}, []int{1, 5}, []int{4, 5})
	if !slices.Equal(p.IO, want) {
		t.Errorf("RQP Q_6^2 = %v, want %v", p.IO, want)
	}
	if st := p.Stats(); st.MinIODistance < 2 || st.CoverRadius > 2 {
		t.Errorf("stats %+v: want no adjacent I/O nodes and cover radius <= 2", st)
	}
	h, pp, _ := CheckMatrix(2, 1)
	plain := &Placement{Torus: tr, T: 1, IO: codewordsIn(tr, h, pp)}
	if plain.Stats().MinIODistance != 1 {
		t.Error("the plain cut of Q_10^2 to 6x6 should have wrap-adjacent I/O nodes")
	}
}

func TestRQP3DAndMixed(t *testing.T) {
	p, err := RQP(torus(t, "4x4x4"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.IO != 9 || st.CoverRadius != 2 {
		t.Errorf("RQP Q_4^3: %+v, want 9 I/O nodes (§5.2.3), cover radius 2", st)
	}
	p, err = RQP(torus(t, "8x4"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.CoverRadius != 2 {
		t.Errorf("RQP T_8x4: %+v, want cover radius 2", st)
	}
}

// TestQP pins the cited scheme on Q_8^2 (Fig. 3: 8 I/O nodes): the
// codewords of y + 3x ≡ 0 (mod 8), 4 apart, every node within 2.
func TestQP(t *testing.T) {
	p, err := QP(torus(t, "8x8"), 1)
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	c := make([]int, 2)
	for _, v := range p.IO {
		p.Torus.Coord(v, c)
		got = append(got, [2]int{c[0], c[1]})
	}
	want := [][2]int{{0, 0}, {5, 1}, {2, 2}, {7, 3}, {4, 4}, {1, 5}, {6, 6}, {3, 7}}
	if !slices.Equal(got, want) {
		t.Errorf("QP Q_8^2 I/O nodes %v, want %v", got, want)
	}
	if st := p.Stats(); st.IO != 8 || st.MinIODistance != 4 || st.CoverRadius != 2 || !slices.Equal(st.Nearest, []int{0, 32, 24}) {
		t.Errorf("QP Q_8^2: %+v, want 8 I/O nodes 4 apart, 32 compute nodes at 1 and 24 at 2", st)
	}
	// Q_6^2: h = 3 puts (0,0) and (2,0) 2 apart, so h = 2 (the cited
	// work's generator for 6×6) is taken.
	if p, err := QP(torus(t, "6x6"), 1); err != nil || p.Stats().IO != 6 || !p.quasiPerfect(1) {
		t.Errorf("QP Q_6^2: %v, %v", p, err)
	}
	for _, dims := range []string{"8x4", "4x4x4", "12x12"} {
		if _, err := QP(torus(t, dims), 1); !errors.Is(err, ErrNoQP) {
			t.Errorf("QP %s: err %v, want ErrNoQP", dims, err)
		}
	}
}

// TestQPReadings pins the other two readings on the simulated tori: both
// keep the spheres disjoint; the cut code of Q_4^3 leaves nodes 3 away.
func TestQPReadings(t *testing.T) {
	for _, tc := range []struct {
		dims       string
		cut, cover int // qp-cut I/O nodes and cover radius
		greedy     int // qp-greedy I/O nodes (cover 2)
	}{
		{"8x8", 10, 2, 10}, {"8x4", 5, 2, 5}, {"4x4x4", 6, 3, 8},
	} {
		cut, err := QPCut(torus(t, tc.dims), 1)
		if err != nil {
			t.Fatal(err)
		}
		if st := cut.Stats(); st.IO != tc.cut || st.MinIODistance < 3 || st.CoverRadius != tc.cover {
			t.Errorf("qp-cut %s: %+v, want %d I/O nodes >= 3 apart, cover %d", tc.dims, st, tc.cut, tc.cover)
		}
		gr, err := QPGreedy(torus(t, tc.dims), 1)
		if err != nil {
			t.Fatal(err)
		}
		if st := gr.Stats(); st.IO != tc.greedy || st.MinIODistance < 3 || st.CoverRadius != 2 {
			t.Errorf("qp-greedy %s: %+v, want %d I/O nodes >= 3 apart, cover 2", tc.dims, st, tc.greedy)
		}
	}
}

func TestBase(t *testing.T) {
	tr := torus(t, "8x8")
	p, err := Base(tr, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.IO, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("base plane %v, want the y = 0 row", p.IO)
	}
	p, _ = Base(tr, 4)
	if !slices.Equal(p.IO, []int{0, 2, 4, 6}) {
		t.Errorf("base 4: %v", p.IO)
	}
	p, _ = Base(tr, 10)
	if !slices.Equal(p.IO, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 12}) {
		t.Errorf("base 10: %v", p.IO)
	}
	if _, err := Base(tr, 65); !errors.Is(err, ErrBadParam) {
		t.Errorf("W=65: %v", err)
	}
}

// §3.2's examples: Q_10^2 with W = 16 by deletion from perfect distance-1
// (20 nodes, |20−16| < |8−16|), W = 12 by addition to distance-2.
func TestWithCount(t *testing.T) {
	for _, c := range []struct {
		dims   string
		w      int
		method string
		t      int
	}{
		{"10x10", 16, "perfect-delete", 1},
		{"10x10", 12, "rqp-add", 2},
		{"4x4x4", 8, "rqp-delete", 1},
		{"4x4x4", 7, "rqp-delete", 1},
		{"8x8", 20, "rqp-add", 1},
		{"8x8", 13, "rqp", 1},
	} {
		p, err := WithCount(torus(t, c.dims), c.w)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.IO) != c.w || p.Method != c.method || p.T != c.t {
			t.Errorf("%s W=%d: %d I/O nodes by %s t=%d, want %d by %s t=%d", c.dims, c.w, len(p.IO), p.Method, p.T, c.w, c.method, c.t)
		}
	}
	// The first deletion is (0,0), the smallest address (Fig. 9).
	p, _ := WithCount(torus(t, "10x10"), 16)
	if p.IO[0] == 0 {
		t.Error("deletion should start at (0,0)")
	}
	for _, w := range []int{0, 100, -3} {
		if _, err := WithCount(torus(t, "10x10"), w); !errors.Is(err, ErrBadParam) {
			t.Errorf("W=%d: %v, want ErrBadParam", w, err)
		}
	}
}

// Assign gives every compute node a nearest I/O node, on random
// placements.
func TestAssignNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tr := torus(t, "6x5x3")
	for trial := 0; trial < 20; trial++ {
		var io []int
		for v := 0; v < tr.N(); v++ {
			if rng.IntN(9) == 0 {
				io = append(io, v)
			}
		}
		if len(io) == 0 {
			continue
		}
		p := &Placement{Torus: tr, Method: "random", T: 1, IO: io}
		a, err := Assign(p)
		if err != nil {
			t.Fatal(err)
		}
		near := p.nearest()
		for v := range a.Of {
			if a.Dist[v] != near[v] || tr.Dist(v, a.Of[v]) != near[v] {
				t.Fatalf("node %s assigned to %s at %d, nearest is %d", tr.Label(v), tr.Label(a.Of[v]), a.Dist[v], near[v])
			}
		}
	}
	if _, err := Assign(&Placement{Torus: tr}); !errors.Is(err, ErrBadParam) {
		t.Errorf("no I/O nodes: %v", err)
	}
}

func TestBadTorus(t *testing.T) {
	for _, s := range []string{"", "1x4", "ax3", "300x300"} {
		if _, err := ParseDims(s); !errors.Is(err, ErrBadTorus) {
			t.Errorf("ParseDims(%q): %v, want ErrBadTorus", s, err)
		}
	}
}
