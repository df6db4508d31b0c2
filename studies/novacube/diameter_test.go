package novacube

import "testing"

// TestEq3EvenK: eq. 3 (⌊⌊k/2⌋·n/2⌋) holds for even k only when ⌊k/2⌋·n
// is even; in 3D with k ≡ 2 (mod 4) it is one short of the BFS diameter
// ⌈⌈k/2⌉·n/2⌉ (the 004 report once said it held for every even k).
func TestEq3EvenK(t *testing.T) {
	for _, c := range []struct {
		k, n, diam int
		eq3        bool
	}{
		{4, 3, 3, true}, {6, 3, 5, false}, {8, 3, 6, true}, {10, 3, 8, false}, {12, 3, 9, true}, {6, 2, 3, true}, {10, 2, 5, true},
	} {
		p := analyse(t, "novacube", c.k, c.n)
		if p.Diameter != c.diam || (p.DiameterFormula == c.diam) != c.eq3 {
			t.Errorf("k=%d n=%d: diameter %d, eq. 3 %d; want %d (eq. 3 right: %v)", c.k, c.n, p.Diameter, p.DiameterFormula, c.diam, c.eq3)
		}
	}
}
