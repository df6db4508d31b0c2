package topo

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func kautzWant(d, k, hosts int) shapeWant {
	n := d + 1
	for range k - 1 {
		n *= d
	}
	deg := 2 * d
	switch {
	case k == 1:
		deg = d
	case k == 2 || d == 1:
		deg = 2*d - 1
	}
	return shapeWant{switches: n, hosts: n * hosts, cables: n*d - (d+1)*d/2, radix: deg + hosts}
}

// TestKautzThesis pins the thesis instance Kautz(7,3) with 2,352 terminals.
func TestKautzThesis(t *testing.T) {
	tp, err := Kautz(7, 3, 6)
	if err != nil {
		t.Fatal(err)
	}
	want := shapeWant{switches: 392, hosts: 2352, cables: 392*7 - 28, radix: 20}
	if want != kautzWant(7, 3, 6) {
		t.Fatalf("closed form %+v, want %+v", kautzWant(7, 3, 6), want)
	}
	g, st := verifyShape(t, tp, want)
	byDeg := map[int]int{}
	for s := range g.NumSwitches() {
		byDeg[g.Degree(int32(s))]++
	}
	// 8·7 = 56 alternating strings aba share a cable with bab.
	if len(byDeg) != 2 || byDeg[14] != 336 || byDeg[13] != 56 {
		t.Errorf("degrees %v, want 336 switches of degree 14 and 56 of 13", byDeg)
	}
	if !st.Connected || st.Diameter != 3 {
		t.Errorf("hops %+v, want connected with diameter 3", st)
	}
	if g.SwitchName(0) != "kautz 010" || g.SwitchName(391) != "kautz 767" {
		t.Errorf("names %q .. %q", g.SwitchName(0), g.SwitchName(391))
	}
}

func TestKautzCounts(t *testing.T) {
	for _, c := range []struct{ d, k int }{{1, 1}, {1, 4}, {2, 1}, {2, 2}, {2, 3}, {2, 4}, {3, 3}, {4, 2}, {3, 4}, {10, 2}} {
		for _, hosts := range []int{0, 2} {
			tp, err := Kautz(c.d, c.k, hosts)
			if err != nil {
				t.Fatal(err)
			}
			_, st := verifyShape(t, tp, kautzWant(c.d, c.k, hosts))
			if !st.Connected || st.Diameter > c.k {
				t.Errorf("d=%d k=%d: %+v, want connected with diameter <= k", c.d, c.k, st)
			}
		}
	}
}

// TestKautzArcs enumerates K(d,k) by brute force over all strings and
// checks labels, numbering and that the cables are exactly the arcs
// without direction.
func TestKautzArcs(t *testing.T) {
	for _, c := range []struct{ d, k int }{{2, 3}, {3, 3}, {2, 4}, {3, 1}, {11, 2}} {
		// All strings over {0..d} of length k without equal neighbours, in
		// lexicographic order.
		var verts [][]int
		str := make([]int, c.k)
		var rec func(i int)
		rec = func(i int) {
			if i == c.k {
				verts = append(verts, append([]int(nil), str...))
				return
			}
			for x := 0; x <= c.d; x++ {
				if i > 0 && x == str[i-1] {
					continue
				}
				str[i] = x
				rec(i + 1)
			}
		}
		rec(0)
		id := map[string]int{}
		sep := ""
		if c.d >= 10 {
			sep = "."
		}
		for i, v := range verts {
			id[fmtInts(v, sep)] = i
		}
		arcs := map[[2]int]bool{}
		for u, v := range verts {
			for x := 0; x <= c.d; x++ {
				if x == v[c.k-1] {
					continue
				}
				w := append(append([]int(nil), v[1:]...), x)
				a, b := u, id[fmtInts(w, sep)]
				if a > b {
					a, b = b, a
				}
				arcs[[2]int{a, b}] = true
			}
		}
		tp, err := Kautz(c.d, c.k, 1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		if g.NumSwitches() != len(verts) {
			t.Fatalf("d=%d k=%d: %d switches, brute force %d", c.d, c.k, g.NumSwitches(), len(verts))
		}
		for s, v := range verts {
			if want := "kautz " + fmtInts(v, sep); g.SwitchName(int32(s)) != want {
				t.Fatalf("d=%d k=%d: switch %d is %q, want %q", c.d, c.k, s, g.SwitchName(int32(s)), want)
			}
		}
		cables := map[[2]int]bool{}
		for ch := range g.NumChannels() {
			if u, v := int(g.Tail[ch]), int(g.Head[ch]); u < v {
				cables[[2]int{u, v}] = true
			}
		}
		if len(cables) != len(arcs) || len(cables) != g.NumChannels()/2 {
			t.Fatalf("d=%d k=%d: %d cables, %d undirected arcs", c.d, c.k, len(cables), len(arcs))
		}
		for a := range arcs {
			if !cables[a] {
				t.Fatalf("d=%d k=%d: arc %v has no cable", c.d, c.k, a)
			}
		}
	}
}

func TestKautzDeterministic(t *testing.T) {
	verifyDeterministic(t, func() (*Topology, error) { return Kautz(3, 3, 2) })
}

func TestKautzParams(t *testing.T) {
	for _, c := range []struct {
		d, k, hosts int
		what        string
	}{
		{0, 3, 1, "d=0"},
		{2, 0, 1, "k=0"},
		{2, 3, -1, "negative hosts"},
		{7, 3, 241, "255 ports"},
		{8, 5, 1, "beyond the LID space"},
		{1 << 30, 1 << 30, 1, "huge parameters"},
	} {
		_, err := Kautz(c.d, c.k, c.hosts)
		wantParamError(t, "kautz", err, c.what)
	}
}

func BenchmarkKautz_7_3(b *testing.B) {
	for b.Loop() {
		if _, err := Kautz(7, 3, 6); err != nil {
			b.Fatal(err)
		}
	}
}
