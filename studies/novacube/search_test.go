package novacube

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// The fewest VC classes by hop type, per reading (literal, quadrant,
// reducing, minimal, tables; 0: none), and Audit's verdict on the
// assignment found.
func TestMinClasses(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want [5]int
	}{
		{4, 2, [5]int{3, 3, 2, 2, 1}},
		{5, 2, [5]int{3, 3, 3, 0, 2}},
		{6, 2, [5]int{3, 3, 3, 3, 2}},
		{8, 2, [5]int{4, 4, 3, 3, 2}},
		{4, 3, [5]int{3, 3, 3, 2, 2}},
	} {
		cube, _ := NewCube(c.k, c.n, true)
		for i, v := range Variants {
			r, err := MinClasses(cube, v)
			if err != nil {
				t.Fatal(err)
			}
			if r.Classes != c.want[i] {
				t.Errorf("%dx%d %s: %d classes, want %d (%s)", c.k, c.n, v, r.Classes, c.want[i], r.Scheme.Doc)
			}
			vcs := r.Classes
			if vcs == 0 {
				vcs = r.Types
			}
			if r.Audit == nil || r.Audit.Acyclic != (r.Classes > 0) || r.Scheme.VCs != vcs {
				t.Errorf("%dx%d %s: Audit's verdict %+v does not match %d classes", c.k, c.n, v, r.Audit, r.Classes)
			}
			if r.Classes > 0 && strings.Count(r.Scheme.Doc, "VC") != r.Classes {
				t.Errorf("%dx%d %s: scheme %q for %d classes", c.k, c.n, v, r.Scheme.Doc, r.Classes)
			}
		}
	}
}

// The pruning never cuts an acyclic assignment: below the minimum every
// assignment (enumerated without the search's cuts) is cyclic.
func TestMinClassesExhaustive(t *testing.T) {
	for _, c := range []struct {
		k, n int
		v    Variant
	}{{4, 2, Literal}, {6, 2, Minimal}, {5, 2, Reducing}} {
		cube, _ := NewCube(c.k, c.n, true)
		r, err := MinClasses(cube, c.v)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newClassSearch(cube, c.v)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		var rgs func(i, k int)
		rgs = func(i, k int) {
			if i == len(s.used) {
				checked++
				if cyc, err := s.check(k); err != nil || !cyc {
					t.Errorf("%dx%d %s: %v classes %v acyclic (err %v), minimum %d", c.k, c.n, c.v, k, s.part, err, r.Classes)
				}
				return
			}
			for cl := 0; cl <= k && cl < r.Classes-1; cl++ {
				s.part[s.used[i]] = cl
				rgs(i+1, max(k, cl+1))
			}
		}
		rgs(0, 0)
		if checked < 1<<(len(s.used)-2) {
			t.Errorf("%dx%d %s: %d assignments below %d classes checked", c.k, c.n, c.v, checked, r.Classes)
		}
	}
}

// The readings' exact average path lengths: Table 2's 3.06 (8×8) is
// reached by the minimal reading only.
func TestReadingsAPL(t *testing.T) {
	for _, c := range []struct {
		k, n int
		want [5]float64
	}{
		{8, 2, [5]float64{4.335, 3.792, 3.303, 3.063, 3.063}},
		{6, 2, [5]float64{3.055, 2.842, 2.545, 2.371, 2.371}},
		{4, 3, [5]float64{3.118, 2.992, 2.665, 2.444, 2.444}},
	} {
		cube, _ := NewCube(c.k, c.n, true)
		for i, v := range Variants {
			if got := ExpectedAPL(cube, v); math.Abs(got-c.want[i]) > 5e-4 {
				t.Errorf("%dx%d %s: APL %.4f, want %.3f", c.k, c.n, v, got, c.want[i])
			}
		}
	}
}

// Fig. 4 under the other readings: the quadrant reading weighs S3 by the
// 8 hops its quadrant needs (the paper: 6), the reducing reading drops S3
// and S4.
func TestFig4Readings(t *testing.T) {
	c, _ := NewCube(8, 2, true)
	at := func(x, y int) int { return x + 8*y }
	w := func(ds ...float64) []float64 {
		sum, out := 0.0, make([]float64, len(ds))
		for _, d := range ds {
			sum += 1 / (d * d)
		}
		for i, d := range ds {
			out[i] = 1 / (d * d) / sum
		}
		return out
	}
	q, rd := w(4, 4, 8, 6, 3), w(4, 4, 3)
	for v, want := range map[Variant]map[int]float64{
		Quadrant: {at(1, 0): q[0], at(0, 1): q[1], at(7, 0): q[2], at(0, 7): q[3], at(4, 4): q[4]},
		Reducing: {at(1, 0): rd[0], at(0, 1): rd[1], at(4, 4): rd[2]},
	} {
		hs := newRouter(c, at(2, 3), v).next(nil, at(0, 0), modeSrc, 0)
		if len(hs) != len(want) {
			t.Fatalf("%s: %d candidates, want %d", v, len(hs), len(want))
		}
		for _, h := range hs {
			if n := c.dest(at(0, 0), h.slot); math.Abs(h.p-want[n]) > 1e-9 {
				t.Errorf("%s: neighbour %d: p = %.5f, want %.5f", v, n, h.p, want[n])
			}
		}
	}
}

// The quadrant reading changes the literal one's probabilities, not its
// hops: their dependencies by hop type coincide.
func TestQuadrantSameDeps(t *testing.T) {
	for _, k := range [][2]int{{8, 2}, {5, 2}, {4, 3}} {
		c, _ := NewCube(k[0], k[1], true)
		a, err := walkDeps(c, Literal, numTypes(c.N), hopType(c.N))
		if err != nil {
			t.Fatal(err)
		}
		b, err := walkDeps(c, Quadrant, numTypes(c.N), hopType(c.N))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a, b) {
			t.Errorf("%dx%d: literal and quadrant dependencies differ", k[0], k[1])
		}
	}
}

// A hand-made 3-class scheme for the minimal reading (step 1, the source
// jump included, on a class of its own, the paper's dateline pair after
// it) is acyclic, so the search's minimum can be no larger; with the
// quadrant's jumps moved to that class too it is cyclic.
func TestMinimalThreeClassScheme(t *testing.T) {
	scheme := func(jumps bool) Scheme {
		return Scheme{Name: "step-1+dateline", VCs: 3, vc: func(h hopState) int {
			if h.step1 || jumps && h.jumpHere {
				return 2
			}
			return datelineVC(h)
		}}
	}
	for _, k := range [][2]int{{8, 2}, {6, 2}, {4, 3}} {
		c, _ := NewCube(k[0], k[1], true)
		a, err := Audit(c, Minimal, scheme(false))
		if err != nil {
			t.Fatal(err)
		}
		aj, err := Audit(c, Minimal, scheme(true))
		if err != nil {
			t.Fatal(err)
		}
		r, err := MinClasses(c, Minimal)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Acyclic || aj.Acyclic || r.Classes < 1 || r.Classes > 3 {
			t.Errorf("%dx%d: the 3-class scheme acyclic %v (jumps with step 1: %v), search minimum %d", k[0], k[1], a.Acyclic, aj.Acyclic, r.Classes)
		}
	}
}

func BenchmarkMinClasses(b *testing.B) {
	for _, k := range [][2]int{{8, 2}, {4, 3}} {
		c, _ := NewCube(k[0], k[1], true)
		for _, v := range []Variant{Literal, Minimal} {
			b.Run(fmt.Sprintf("%dx%d/%s", k[0], k[1], v), func(b *testing.B) {
				for b.Loop() {
					if _, err := MinClasses(c, v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
