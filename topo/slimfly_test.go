package topo

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// TestSlimFlyFacts checks the Slim Fly facts of Besta & Hoefler (SC14) for
// q = 3, 5, 7: 2q² routers, regular of degree (3q − δ)/2, diameter 2.
func TestSlimFlyFacts(t *testing.T) {
	for _, c := range []struct{ q, routers, degree, hosts int }{
		{3, 18, 5, 1}, {5, 50, 7, 4}, {7, 98, 11, 6},
	} {
		tp, err := SlimFly(c.q, c.hosts)
		if err != nil {
			t.Fatal(err)
		}
		if tp.Radix != c.degree+c.hosts {
			t.Fatalf("q=%d: radix %d, want %d", c.q, tp.Radix, c.degree+c.hosts)
		}
		g := directCheck(t, tp, directWant{switches: c.routers, hosts: c.routers * c.hosts, cables: c.routers * c.degree / 2})
		if lo, hi := directDegrees(g); lo != c.degree || hi != c.degree {
			t.Fatalf("q=%d: degrees %d..%d, want %d", c.q, lo, hi, c.degree)
		}
		st := g.Hops()
		if !st.Connected || st.Diameter != 2 {
			t.Fatalf("q=%d: %+v, want diameter 2", c.q, st)
		}
		directGonumOracle(t, g)
		directDeterministic(t, func() (*Topology, error) { return SlimFly(c.q, c.hosts) })
	}
}

// TestSlimFlyAllPrimes checks degree and diameter by BFS for every odd
// prime up to 31 (both δ = +1 and δ = −1 families), and that X and X' are
// symmetric sets of the right size.
func TestSlimFlyAllPrimes(t *testing.T) {
	for q := 3; q <= 31; q += 2 {
		if !sfIsPrime(q) {
			continue
		}
		X, Xp := mmsGenerators(q)
		for _, set := range [][]int{X, Xp} {
			in := map[int]bool{}
			for _, v := range set {
				in[v] = true
			}
			for v := range in {
				if !in[(q-v)%q] || v == 0 {
					t.Fatalf("q=%d: generator set %v not symmetric or contains 0", q, set)
				}
			}
			if len(in) != len(set) || len(set) != sfDegree(q)-q {
				t.Fatalf("q=%d: generator set %v, want %d distinct elements", q, set, sfDegree(q)-q)
			}
		}
		tp, err := SlimFly(q, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := directDegrees(g); lo != sfDegree(q) || hi != lo {
			t.Fatalf("q=%d: degrees %d..%d, want %d", q, lo, hi, sfDegree(q))
		}
		if _, diam := directDistSum(g); diam != 2 {
			t.Fatalf("q=%d: diameter %d, want 2", q, diam)
		}
	}
}

func TestSlimFlyLabelsAndGroups(t *testing.T) {
	tp, err := SlimFly(3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := tp.Fabric.Name(tp.Fabric.SortedByGUID()[0]); got != "slimfly (0,0,0)" {
		t.Fatalf("first switch %q", got)
	}
	for i, c := range tp.Coords {
		if tp.Group[i] != c[0]*3+c[1] {
			t.Fatalf("switch %d %v: group %d", i, c, tp.Group[i])
		}
	}
}

func TestSlimFlyErrors(t *testing.T) {
	for _, q := range []int{-1, 0, 1, 2, 4, 8, 9, 15, 25} {
		if _, err := SlimFly(q, 1); err == nil {
			t.Fatalf("q=%d accepted", q)
		}
	}
	if _, err := SlimFly(5, -1); err == nil {
		t.Fatal("negative hosts accepted")
	}
	if _, err := SlimFly(113, 1); err == nil {
		t.Fatal("51,076 LIDs accepted")
	}
	if _, err := SlimFly(167, 10); err == nil {
		t.Fatal("radix beyond 254 accepted")
	}
	tp, err := Generate("slimfly", directExample(t, "slimfly"))
	if err != nil || tp.Fabric.Count(fabric.Switch) != 50 {
		t.Fatalf("example: %v", err)
	}
}
