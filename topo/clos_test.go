package topo

import (
	"math"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func clos2Want(r int) shapeWant {
	return shapeWant{switches: r + r/2, hosts: r * r / 2, cables: r * r / 2, radix: r}
}

func clos3Want(r int) shapeWant {
	return shapeWant{switches: 5 * r * r / 4, hosts: r * r * r / 4, cables: r * r * r / 2, radix: r}
}

// clos3AvgLeafHops: a leaf is 2 hops from the other r/2−1 leaves of its pod
// and 4 from the (r−1)·r/2 leaves of other pods.
func clos3AvgLeafHops(r int) float64 {
	h := r / 2
	return float64(2*(h-1)+4*(r-1)*h) / float64(r*h-1)
}

// verifyFullPorts checks that every port of every switch is cabled.
func verifyFullPorts(t *testing.T, tp *Topology) {
	t.Helper()
	for i := range tp.Fabric.Nodes {
		n := &tp.Fabric.Nodes[i]
		if n.Kind != fabric.Switch {
			continue
		}
		for p := 1; p <= n.NumPorts(); p++ {
			if !n.Ports[p].Cabled() {
				t.Fatalf("%s: %q port %d free", tp.Kind, n.Desc, p)
			}
		}
	}
}

func TestClos2_r36(t *testing.T) {
	tp, err := Clos2(36)
	if err != nil {
		t.Fatal(err)
	}
	_, st := verifyShape(t, tp, shapeWant{switches: 54, hosts: 648, cables: 648, radix: 36})
	verifyFullPorts(t, tp)
	if st.Diameter != 2 || st.AvgSwitchHops != 2 {
		t.Errorf("hops %+v, want diameter 2 and 2 hops between leaves", st)
	}
	if tp.Bisection != 324 {
		t.Errorf("bisection %d, want 324", tp.Bisection)
	}
	g, _ := fabric.Compile(tp.Fabric)
	if g.SwitchName(0) != "clos2 leaf0" || g.SwitchName(36) != "clos2 spine0" {
		t.Errorf("names %q, %q", g.SwitchName(0), g.SwitchName(36))
	}
}

func TestClos3_r36(t *testing.T) {
	tp, err := Clos3(36)
	if err != nil {
		t.Fatal(err)
	}
	want := shapeWant{switches: 1620, hosts: 11664, cables: 23328, radix: 36}
	if want != clos3Want(36) {
		t.Fatalf("closed form %+v disagrees with the brief's %+v", clos3Want(36), want)
	}
	_, st := verifyShape(t, tp, want)
	verifyFullPorts(t, tp)
	levels := [3]int{}
	for _, l := range tp.Group {
		levels[l]++
	}
	if levels != [3]int{648, 648, 324} {
		t.Errorf("leaf/aggregation/core = %v, want [648 648 324]", levels)
	}
	if st.Diameter != 4 || st.CADiameter != 4 || math.Abs(st.AvgSwitchHops-clos3AvgLeafHops(36)) > 1e-9 {
		t.Errorf("hops %+v, want diameter 4, average %v", st, clos3AvgLeafHops(36))
	}
	if tp.Bisection != 11664/2 {
		t.Errorf("bisection %d, want %d", tp.Bisection, 11664/2)
	}
}

func TestClosSmall(t *testing.T) {
	for _, r := range []int{2, 4, 6, 8, 10} {
		c2, err := Clos2(r)
		if err != nil {
			t.Fatal(err)
		}
		_, s2 := verifyShape(t, c2, clos2Want(r))
		verifyFullPorts(t, c2)
		x2, err := XGFT(2, []int{r / 2, r}, []int{1, r / 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, sx := verifyShape(t, x2, clos2Want(r)); sx != s2 {
			t.Errorf("r=%d: Clos2 %+v, XGFT %+v", r, s2, sx)
		}

		c3, err := Clos3(r)
		if err != nil {
			t.Fatal(err)
		}
		_, s3 := verifyShape(t, c3, clos3Want(r))
		verifyFullPorts(t, c3)
		if r > 2 && math.Abs(s3.AvgSwitchHops-clos3AvgLeafHops(r)) > 1e-9 {
			t.Errorf("r=%d: average leaf hops %v, want %v", r, s3.AvgSwitchHops, clos3AvgLeafHops(r))
		}
		x3, err := XGFT(3, []int{r / 2, r / 2, r}, []int{1, r / 2, r / 2})
		if err != nil {
			t.Fatal(err)
		}
		if _, sx := verifyShape(t, x3, clos3Want(r)); sx != s3 {
			t.Errorf("r=%d: Clos3 %+v, XGFT %+v", r, s3, sx)
		}
	}
}

func TestClosBisection(t *testing.T) {
	for _, c := range []struct {
		gen func(int) (*Topology, error)
		r   int
	}{{Clos2, 4}, {Clos2, 6}, {Clos2, 8}, {Clos3, 4}} {
		tp, err := c.gen(c.r)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		if got := bruteBisection(t, g); got != tp.Bisection {
			t.Errorf("%s r=%d: brute-force bisection %d, Bisection %d", tp.Kind, c.r, got, tp.Bisection)
		}
	}
}

func TestClosDeterministic(t *testing.T) {
	verifyDeterministic(t, func() (*Topology, error) { return Clos2(36) })
	verifyDeterministic(t, func() (*Topology, error) { return Clos3(12) })
}

func TestClosParams(t *testing.T) {
	for _, r := range []int{0, -2, 3, 35, 256} {
		_, err := Clos2(r)
		wantParamError(t, "clos2", err, "radix "+itoaTest(r))
		_, err = Clos3(r)
		wantParamError(t, "clos3", err, "radix "+itoaTest(r))
	}
	_, err := Clos3(60) // 54,000 hosts
	wantParamError(t, "clos3", err, "radix 60 (beyond the LID space)")
}

func itoaTest(x int) string {
	if x < 0 {
		return "-" + itoaTest(-x)
	}
	if x < 10 {
		return string(rune('0' + x))
	}
	return itoaTest(x/10) + string(rune('0'+x%10))
}

func BenchmarkClos3_r36(b *testing.B) {
	for b.Loop() {
		if _, err := Clos3(36); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClos2_r36(b *testing.B) {
	for b.Loop() {
		if _, err := Clos2(36); err != nil {
			b.Fatal(err)
		}
	}
}
