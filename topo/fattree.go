package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// FatTree builds the k-ary n-tree of Petrini and Vanneschi ("k-ary n-trees:
// High performance networks for massively parallel architectures", IPPS
// 1997, Section 2), with levels counted from the leaves: n levels 0..n−1 of
// k^(n−1) switches each, k hosts on every leaf (level-0) switch, k^n hosts
// and (n−1)·k^n switch-to-switch cables.
//
// A switch is ⟨w, l⟩ with level l and w = (w_0,…,w_(n−2)) ∈ {0..k−1}^(n−1);
// ⟨w, l⟩ and ⟨w', l+1⟩ are cabled iff w and w' agree in every digit except
// digit l. Switches are numbered level by level from the leaves, each level
// in order of w read as a base-k number with w_0 least significant; labels
// read "L<l> (w_0,…,w_(n−2))".
//
// Ports: a switch reaches the child whose digit l is u on port u+1 (hosts of
// a leaf on 1..k) and the parent whose digit l is v on port k+1+v; top
// switches use only ports 1..k. radix 0 means 2k; a larger radix (up to
// fabric.MaxPorts) models the same tree built from bigger switches and
// leaves the extra ports free; a smaller one is rejected.
//
// Group[s] is the level. Coords is nil (the tree position is in the label).
// For even k and n ≥ 2, Bisection = k^n/2: the tree has full bisection
// bandwidth (any cut halving the hosts crosses at least k^n/2 cables), and
// putting half of the k subtrees below the top level and half of the top
// switches on each side attains it; for odd k it is left 0. Compare XGFT(n; k,…,k;
// 1,k,…,k), which is the same network. Dumps of "fat trees" made by other
// tools (e.g. the corpus file fattree-k4-n3-80sw-128ca.topo, built from
// 8-port switches with other counts) are different networks.
func FatTree(k, n, radix int) (*Topology, error) {
	const kind = "fattree"
	if k < 2 {
		return nil, paramError(kind, "k=%d, expected >= 2", k)
	}
	if n < 1 {
		return nil, paramError(kind, "n=%d levels, expected >= 1", n)
	}
	if 2*k > fabric.MaxPorts {
		return nil, paramError(kind, "k=%d needs %d-port switches, expected at most %d", k, 2*k, fabric.MaxPorts)
	}
	params := fmt.Sprintf("k=%d n=%d", k, n)
	switch {
	case radix == 0:
		radix = 2 * k
	case radix < 2*k || radix > fabric.MaxPorts:
		return nil, paramError(kind, "radix %d, expected 0 (meaning 2k = %d) or %d..%d", radix, 2*k, 2*k, fabric.MaxPorts)
	default:
		params += fmt.Sprintf(" radix=%d", radix)
	}
	per := 1 // switches per level, k^(n-1)
	for range n - 1 {
		per = mulCap(per, k)
	}
	if err := checkLIDBudget(kind, mulCap(per, n), mulCap(per, k)); err != nil {
		return nil, err
	}

	s := newSpec(kind, params, radix)
	w := make([]int, n-1)
	for l := range n {
		hosts := 0
		if l == 0 {
			hosts = k
		}
		for idx := range per {
			for j, x := 0, idx; j < n-1; j++ {
				w[j] = x % k
				x /= k
			}
			label := fmt.Sprintf("L%d", l)
			if n > 1 {
				label += " " + coordLabel(w)
			}
			s.addSwitch(label, hosts)
			s.group = append(s.group, l)
		}
	}
	stride := 1 // k^l
	for l := 0; l < n-1; l++ {
		for idx := range per {
			u := (idx / stride) % k
			for v := range k {
				parent := idx + (v-u)*stride
				s.linkPorts(l*per+idx, k+1+v, (l+1)*per+parent, u+1)
			}
		}
		stride *= k
	}
	if k%2 == 0 && n >= 2 {
		s.bisection = per * k / 2
	}
	return s.build()
}

func init() {
	register(Generator{
		Kind:    "fattree",
		Short:   "k-ary n-tree fat tree (Petrini & Vanneschi 1997): n levels of k^(n-1) switches, k^n hosts",
		Example: "--k 4 --n 3",
		Params: []Param{
			{"k", "4", "arity: hosts per leaf switch, up and down ports per switch"},
			{"n", "3", "number of switch levels"},
			{"radix", "", "ports per switch (default 2k; larger leaves ports free)"},
		},
		Build: func(v Values) (*Topology, error) {
			k, n, radix := v.Int("k"), v.Int("n"), 0
			if v.Has("radix") {
				radix = v.Int("radix")
			}
			if err := v.Err(); err != nil {
				return nil, err
			}
			return FatTree(k, n, radix)
		},
	})
}
