package topo

import (
	"math"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func novaBuild(t *testing.T, k, n, hosts int) (*Topology, *fabric.Graph) {
	t.Helper()
	tp, err := NovaCube(k, n, hosts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return tp, g
}

func novaPow(k, n int) int {
	p := 1
	for i := 0; i < n; i++ {
		p *= k
	}
	return p
}

// TestNovaCubeLinks checks eq. 11 of seed 004 (§4.2.6): (n + ½)·k^n cables
// for even k, n·k^n + (k−1)^n/2 for odd k, and the degrees of §4.1.
func TestNovaCubeLinks(t *testing.T) {
	for _, c := range []struct{ k, n, hosts int }{
		{4, 1, 1}, {8, 1, 1}, {4, 2, 1}, {6, 2, 2}, {8, 2, 1}, {16, 2, 1}, {4, 3, 1}, {6, 3, 1}, {4, 4, 1},
		{5, 1, 1}, {3, 2, 1}, {5, 2, 1}, {7, 2, 3}, {3, 3, 1}, {5, 3, 1}, {3, 4, 1},
	} {
		tp, err := NovaCube(c.k, c.n, c.hosts)
		if err != nil {
			t.Fatal(err)
		}
		N := novaPow(c.k, c.n)
		var cables, withoutJump int
		if c.k%2 == 0 {
			cables = (2*c.n + 1) * N / 2
		} else {
			cables = c.n*N + novaPow(c.k-1, c.n)/2
			withoutJump = N - novaPow(c.k-1, c.n)
		}
		if tp.Radix != c.hosts+2*c.n+1 {
			t.Fatalf("k=%d n=%d: radix %d", c.k, c.n, tp.Radix)
		}
		g := directCheck(t, tp, directWant{switches: N, hosts: N * c.hosts, cables: cables})
		low := 0
		for s := 0; s < N; s++ {
			switch g.Degree(int32(s)) {
			case 2 * c.n:
				low++
			case 2*c.n + 1:
			default:
				t.Fatalf("k=%d n=%d: switch %v degree %d", c.k, c.n, tp.Coords[s], g.Degree(int32(s)))
			}
		}
		if low != withoutJump {
			t.Fatalf("k=%d n=%d: %d nodes of degree 2n, want k^n − (k−1)^n = %d", c.k, c.n, low, withoutJump)
		}
	}
}

// TestNovaCubeJumpCables checks that every jump-over cable joins nodes that
// are ⌊k/2⌋ apart (ring distance) in every dimension, on the jump port,
// and that odd-k nodes with a coordinate k−1 have none.
func TestNovaCubeJumpCables(t *testing.T) {
	for _, k := range []int{4, 5, 6, 7} {
		const n, hosts = 2, 1
		tp, g := novaBuild(t, k, n, hosts)
		jumpPort := uint8(hosts + 2*n + 1)
		for s := 0; s < g.NumSwitches(); s++ {
			c := g.ChannelAt(int32(s), jumpPort)
			edge := false
			for _, a := range tp.Coords[s] {
				edge = edge || (k%2 == 1 && a == k-1)
			}
			if (c < 0) != edge {
				t.Fatalf("k=%d: switch %v jump channel %d", k, tp.Coords[s], c)
			}
			if c < 0 {
				continue
			}
			a, b := tp.Coords[s], tp.Coords[g.Head[c]]
			for d := range a {
				diff := (a[d] - b[d] + k) % k
				if min(diff, k-diff) != k/2 || g.InPort[c] != jumpPort {
					t.Fatalf("k=%d: jump %v -> %v (port %d)", k, a, b, g.InPort[c])
				}
			}
		}
	}
}

// TestNovaCubeAPL8x8 reproduces Table 2 of seed 004: average path length
// 3.06 on the 8×8 NovaCube (BFS, mean over ordered pairs of distinct
// nodes, one host per switch).
func TestNovaCubeAPL8x8(t *testing.T) {
	_, g := novaBuild(t, 8, 2, 1)
	st := g.Hops()
	if math.Abs(st.AvgSwitchHops-3.06) > 0.005 || math.Abs(st.AvgSwitchHops-193.0/63) > 1e-12 {
		t.Fatalf("8×8 APL %.6f, want 3.06 (193/63)", st.AvgSwitchHops)
	}
	if st.AvgTermHops != st.AvgSwitchHops {
		t.Fatalf("one host per switch: term %v vs switch %v", st.AvgTermHops, st.AvgSwitchHops)
	}
}

// TestNovaCubeAPLClosedForm checks eq. 10 of seed 004 (§4.2.5),
// E = (k³/3 + k²/2 − 4k/3 + 1)/(k² − 1), exactly: the BFS distance sum over
// ordered pairs S must satisfy 6·S = k²·(2k³ + 3k² − 8k + 6). It holds for
// every even k = 4..16. The derivation assumes even k; for odd k the form
// does not hold, and the BFS sums are pinned here.
func TestNovaCubeAPLClosedForm(t *testing.T) {
	oddSum := map[int]int64{3: 104, 5: 1272, 7: 6508, 9: 22144, 11: 59120, 13: 134264, 15: 271572}
	for k := 3; k <= 16; k++ {
		_, g := novaBuild(t, k, 2, 1)
		sum, _ := directDistSum(g)
		K := int64(k)
		rhs := K * K * (2*K*K*K + 3*K*K - 8*K + 6)
		N := float64(k * k)
		formula := float64(rhs) / 6 / (N * (N - 1))
		bfs := float64(sum) / (N * (N - 1))
		if k%2 == 0 {
			if 6*sum != rhs {
				t.Fatalf("k=%d: BFS APL %.6f, closed form %.6f", k, bfs, formula)
			}
			continue
		}
		if 6*sum == rhs || sum != oddSum[k] {
			t.Fatalf("k=%d (odd): BFS distance sum %d (APL %.6f), pinned %d; closed form %.6f", k, sum, bfs, oddSum[k], formula)
		}
		t.Logf("odd k=%d: BFS APL %.6f, eq. 10 gives %.6f (not meant for odd k)", k, bfs, formula)
	}
}

// TestNovaCubeDiameter lists diameters by BFS. Eq. 3 of seed 004,
// ⌊⌊k/2⌋·n/2⌋, is wrong whenever ⌊k/2⌋·n is odd and for every odd k here;
// the BFS values equal ⌈⌈k/2⌉·n/2⌉ (the proof's last line, rounded up) in
// every case of the table.
func TestNovaCubeDiameter(t *testing.T) {
	table := []struct{ k, n, bfs int }{
		{4, 1, 1}, {5, 1, 2}, {6, 1, 2}, {7, 1, 2}, {8, 1, 2}, {9, 1, 3}, {10, 1, 3}, {12, 1, 3},
		{3, 2, 2}, {4, 2, 2}, {5, 2, 3}, {6, 2, 3}, {7, 2, 4}, {8, 2, 4}, {9, 2, 5}, {10, 2, 5}, {12, 2, 6}, {16, 2, 8},
		{3, 3, 3}, {4, 3, 3}, {5, 3, 5}, {6, 3, 5}, {7, 3, 6}, {8, 3, 6}, {10, 3, 8},
		{3, 4, 4}, {4, 4, 4}, {5, 4, 6}, {6, 4, 6},
	}
	for _, c := range table {
		_, g := novaBuild(t, c.k, c.n, 0)
		_, diam := directDistSum(g)
		eq3 := (c.k / 2 * c.n) / 2
		ceil := ((c.k+1)/2*c.n + 1) / 2
		if diam != c.bfs || diam != ceil {
			t.Fatalf("k=%d n=%d: BFS diameter %d, table %d, ⌈⌈k/2⌉n/2⌉ = %d", c.k, c.n, diam, c.bfs, ceil)
		}
		if eq3 != diam {
			t.Logf("k=%d n=%d: BFS diameter %d, eq. 3 says %d", c.k, c.n, diam, eq3)
		}
	}
}

// TestNovaCubeBisection: eq. 4 of seed 004 counts 2k^(n−1) + k^n/2 cables
// across the cut of one dimension in halves. On 4×4 that is the brute-force
// minimum (16); on 8×8 the antipode-closed half {x0 ∈ {0,1,4,5}} is cut by
// only 32 cables against the formula's 48, so eq. 4 is no minimum
// bisection and NovaCube leaves Topology.Bisection 0.
func TestNovaCubeBisection(t *testing.T) {
	_, g := novaBuild(t, 4, 2, 1)
	if got := directMinBisection(g); got != 2*4+16/2 {
		t.Fatalf("4×4 minimum bisection %d, eq. 4 gives %d", got, 2*4+16/2)
	}
	tp, g := novaBuild(t, 8, 2, 1)
	in := func(s int32) bool { x := tp.Coords[s][0]; return x%4 < 2 }
	cut, half := 0, 0
	for s := int32(0); s < int32(g.NumSwitches()); s++ {
		if in(s) {
			half++
		}
	}
	for c := 0; c < g.NumChannels(); c++ {
		if u, v := g.Tail[c], g.Head[c]; u < v && in(u) != in(v) {
			cut++
		}
	}
	if half != 32 || cut != 32 || tp.Bisection != 0 {
		t.Fatalf("8×8: half %d, cut %d (eq. 4: 48), Bisection %d", half, cut, tp.Bisection)
	}
}

func TestNovaCubeOracleAndDeterminism(t *testing.T) {
	for _, c := range []struct{ k, n int }{{4, 2}, {5, 2}, {6, 2}, {3, 3}, {4, 3}, {7, 1}} {
		_, g := novaBuild(t, c.k, c.n, 1)
		directGonumOracle(t, g)
		directDeterministic(t, func() (*Topology, error) { return NovaCube(c.k, c.n, 1) })
	}
}

func TestNovaCubeErrors(t *testing.T) {
	for _, c := range []struct{ k, n, hosts int }{
		{2, 3, 1}, {1, 2, 1}, {3, 1, 1}, {4, 0, 1}, {4, 2, -1}, {100, 3, 1}, {4, 2, 250}, {200, 2, 1},
	} {
		if _, err := NovaCube(c.k, c.n, c.hosts); err == nil {
			t.Fatalf("NovaCube%+v accepted", c)
		}
	}
	tp, err := Generate("novacube", directExample(t, "novacube"))
	if err != nil || tp.Fabric.Count(fabric.Switch) != 64 {
		t.Fatalf("example: %v", err)
	}
	if got := tp.Fabric.Name(tp.Fabric.SortedByGUID()[9]); got != "novacube (1,1)" {
		t.Fatalf("switch 9 is %q", got)
	}
}
