package topo

import (
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// TestXGFTHandCounts checks small XGFTs counted by hand from the
// definition: level i has ∏_(j>i) m_j · ∏_(j≤i) w_j nodes and the level-i
// nodes have w_(i+1) parents each.
func TestXGFTHandCounts(t *testing.T) {
	for _, c := range []struct {
		h    int
		m, w []int
		want shapeWant
		diam int
	}{
		// 4 leaves (4·1) with 4 hosts, 4 tops (1·4); 4·4 cables; 4+4 ports.
		{2, []int{4, 4}, []int{1, 4}, shapeWant{8, 16, 16, 8}, 2},
		// Slimmed: 3 leaves (3·1) with 4 hosts and 2 parents, 2 tops (1·2)
		// with 3 children; 6 cables; max(4+2, 3) ports.
		{2, []int{4, 3}, []int{1, 2}, shapeWant{5, 12, 6, 6}, 2},
		// Levels of 2·3·1 = 6, 3·1·2 = 6 and 1·2·2 = 4 switches, 12 hosts,
		// 6·2 + 6·2 = 24 cables; max(2+2, 2+2, 3) ports.
		{3, []int{2, 2, 3}, []int{1, 2, 2}, shapeWant{16, 12, 24, 4}, 4},
		// One switch with 5 hosts.
		{1, []int{5}, []int{1}, shapeWant{1, 5, 0, 5}, 0},
		// Fatted top: 2 leaves with 3 hosts and 4 parents, 4 tops; 8 cables.
		{2, []int{3, 2}, []int{1, 4}, shapeWant{6, 6, 8, 7}, 2},
	} {
		tp, err := XGFT(c.h, c.m, c.w)
		if err != nil {
			t.Fatal(err)
		}
		g, st := verifyShape(t, tp, c.want)
		if st.CADiameter != c.diam {
			t.Errorf("%s: leaf diameter %d, want %d", tp.Params, st.CADiameter, c.diam)
		}
		// Every level-i switch has m_i children and w_(i+1) parents.
		for s := range g.NumSwitches() {
			lvl := tp.Group[s] + 1
			down, up := len(g.TermsOf(int32(s))), 0
			for ch := g.Off[s]; ch < g.Off[s+1]; ch++ {
				if tp.Group[g.Head[ch]] > tp.Group[s] {
					up++
				} else {
					down++
				}
			}
			wantUp := 0
			if lvl < c.h {
				wantUp = c.w[lvl]
			}
			if down != c.m[lvl-1] || up != wantUp {
				t.Fatalf("%s: %s: %d children, %d parents, want %d, %d", tp.Params, g.SwitchName(int32(s)), down, up, c.m[lvl-1], wantUp)
			}
			if !strings.HasPrefix(g.SwitchName(int32(s)), "xgft L") {
				t.Fatalf("label %q", g.SwitchName(int32(s)))
			}
		}
	}
}

// TestXGFTClosedForms compares counts with the closed forms on more shapes.
func TestXGFTClosedForms(t *testing.T) {
	for _, c := range []struct{ m, w []int }{
		{[]int{2, 3, 2}, []int{1, 3, 1}},
		{[]int{3, 3, 3}, []int{1, 2, 3}},
		{[]int{4, 2, 3, 2}, []int{1, 2, 2, 2}},
		{[]int{1, 4}, []int{1, 1}},
	} {
		h := len(c.m)
		tp, err := XGFT(h, c.m, c.w)
		if err != nil {
			t.Fatal(err)
		}
		var want shapeWant
		want.hosts = 1
		for _, x := range c.m {
			want.hosts *= x
		}
		for i := 1; i <= h; i++ {
			size := 1
			for j := i + 1; j <= h; j++ {
				size *= c.m[j-1]
			}
			for j := 1; j <= i; j++ {
				size *= c.w[j-1]
			}
			want.switches += size
			up := 0
			if i < h {
				up = c.w[i]
				want.cables += size * up
			}
			want.radix = max(want.radix, c.m[i-1]+up)
		}
		_, st := verifyShape(t, tp, want)
		if !st.Connected {
			t.Errorf("%s: not connected", tp.Params)
		}
	}
}

func TestXGFTDeterministic(t *testing.T) {
	verifyDeterministic(t, func() (*Topology, error) { return XGFT(3, []int{2, 2, 3}, []int{1, 2, 2}) })
}

func TestXGFTParams(t *testing.T) {
	for _, c := range []struct {
		h    int
		m, w []int
		what string
	}{
		{0, nil, nil, "h=0"},
		{2, []int{4}, []int{1, 4}, "too few m"},
		{2, []int{4, 4}, []int{1, 4, 4}, "too many w"},
		{2, []int{4, 0}, []int{1, 4}, "m2=0"},
		{2, []int{4, 4}, []int{1, 0}, "w2=0"},
		{2, []int{4, 4}, []int{2, 4}, "w1=2 (multi-port hosts)"},
		{2, []int{200, 4}, []int{1, 100}, "radix over 254"},
		{3, []int{40, 40, 40}, []int{1, 40, 40}, "beyond the LID space"},
	} {
		_, err := XGFT(c.h, c.m, c.w)
		wantParamError(t, "xgft", err, c.what)
	}
	tp, err := Generate("xgft", map[string]string{"h": "2", "m": "4,3", "w": "1,2"})
	if err != nil || tp.Fabric.Count(fabric.CA) != 12 {
		t.Fatalf("Generate xgft: %v", err)
	}
}
