package topo

import (
	"reflect"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// randomCables returns the sorted switch pairs of a compiled fabric.
func randomCables(g *fabric.Graph) [][2]int32 {
	var out [][2]int32
	for c := range g.NumChannels() {
		if u, v := g.Tail[c], g.Head[c]; u < v {
			out = append(out, [2]int32{u, v})
		}
	}
	return out
}

// TestRandomManySeeds: connected, simple, degree on target (the last
// switch one short when switches·degree is odd) for many sizes and seeds.
func TestRandomManySeeds(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 10
	}
	for _, c := range []struct{ n, d int }{
		{2, 1}, {3, 2}, {4, 3}, {5, 4}, {7, 6}, {12, 11}, {5, 3}, {9, 2}, {10, 3}, {16, 4},
		{33, 3}, {50, 2}, {64, 6}, {100, 5}, {101, 7}, {40, 30}, {200, 2},
	} {
		for seed := range uint64(seeds) {
			tp, err := Random(c.n, c.d, 1, seed)
			if err != nil {
				t.Fatal(err)
			}
			want := shapeWant{switches: c.n, hosts: c.n, cables: c.n * c.d / 2, radix: c.d + 1}
			var g *fabric.Graph
			var st fabric.HopStats
			if seed < 3 { // full checks with the gonum oracle
				g, st = verifyShape(t, tp, want)
			} else {
				if g, err = fabric.Compile(tp.Fabric); err != nil {
					t.Fatal(err)
				}
				st = g.Hops()
				distinct := map[[2]int32]bool{}
				for _, e := range randomCables(g) {
					distinct[e] = true
				}
				if len(distinct) != want.cables || g.NumChannels() != 2*want.cables || g.Loopbacks != 0 {
					t.Fatalf("n=%d d=%d seed %d: %d channels, want %d distinct cables", c.n, c.d, seed, g.NumChannels(), want.cables)
				}
			}
			if !st.Connected {
				t.Fatalf("n=%d d=%d seed %d: not connected", c.n, c.d, seed)
			}
			for s := range g.NumSwitches() {
				want := c.d
				if s == c.n-1 && c.n*c.d%2 == 1 {
					want--
				}
				if got := g.Degree(int32(s)); got != want {
					t.Fatalf("n=%d d=%d seed %d: %s has degree %d, want %d", c.n, c.d, seed, g.SwitchName(int32(s)), got, want)
				}
			}
		}
	}
}

func TestRandomSeeds(t *testing.T) {
	for seed := range uint64(5) {
		verifyDeterministic(t, func() (*Topology, error) { return Random(32, 4, 2, seed) })
	}
	seen := map[string]uint64{}
	for seed := range uint64(20) {
		tp, err := Random(32, 4, 1, seed)
		if err != nil {
			t.Fatal(err)
		}
		g, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		key := ""
		for _, e := range randomCables(g) {
			key += string(rune(e[0])) + string(rune(e[1]))
		}
		if old, dup := seen[key]; dup {
			t.Fatalf("seeds %d and %d give the same cables", old, seed)
		}
		seen[key] = seed
	}
	// Other hosts do not change the switch graph of a seed.
	a, _ := Random(20, 3, 1, 9)
	b, _ := Random(20, 3, 4, 9)
	ga, _ := fabric.Compile(a.Fabric)
	gb, _ := fabric.Compile(b.Fabric)
	if !reflect.DeepEqual(randomCables(ga), randomCables(gb)) {
		t.Errorf("host count changed the switch graph")
	}
}

func TestRandomParams(t *testing.T) {
	for _, c := range []struct {
		n, d, hosts int
		what        string
	}{
		{1, 1, 1, "one switch"},
		{10, 0, 1, "degree 0"},
		{10, 10, 1, "degree = switches"},
		{10, 1, 1, "degree 1 for 10 switches"},
		{10, 3, -1, "negative hosts"},
		{300, 200, 60, "260 ports"},
		{40000, 3, 1, "beyond the LID space"},
	} {
		_, err := Random(c.n, c.d, c.hosts, 1)
		wantParamError(t, "random", err, c.what)
	}
	tp, err := Generate("random", map[string]string{"switches": "12", "degree": "3", "seed": "0x2a"})
	if err != nil || tp.Params != "switches=12 degree=3 hosts=1 seed=42" {
		t.Fatalf("Generate random: %v", err)
	}
}

func BenchmarkRandom_1024_d8(b *testing.B) {
	for b.Loop() {
		if _, err := Random(1024, 8, 4, 1); err != nil {
			b.Fatal(err)
		}
	}
}
