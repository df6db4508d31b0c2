package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// Kautz builds a cabled fabric from the Kautz digraph K(d, k) (W. H. Kautz,
// "Bounds on directed (d,k) graphs", 1968; see also Li, Lu, Su, "Using
// Kautz graphs as interconnection networks", 2004) with hosts per switch.
// The vertices are the strings s_1…s_k over the alphabet {0..d} with no two
// consecutive symbols equal, (d+1)·d^(k−1) of them; each has the d arcs
// s_1…s_k → s_2…s_k x (x ≠ s_k), so the digraph has no self-loops and
// directed diameter k.
//
// Choice: every arc becomes one cable, except that an antiparallel pair
// u→v, v→u becomes a single cable (a cable is bidirectional; a second one
// would be a parallel cable that only the directed definition asks for).
// Such pairs are exactly the alternating strings abab…, (d+1)·d/2 pairs, so
// the fabric has (d+1)·d^k − (d+1)·d/2 cables; a switch has 2d cables, or
// 2d−1 when its string alternates (every string when k = 2, and d when
// k = 1, where K(d,1) is the complete graph on d+1 switches). Radix = hosts
// + the largest switch degree. Kautz(7, 3, 6) is the thesis instance
// (SEEDS.md §001): 392 switches, 2,352 hosts, 2,716 cables, radix 20.
//
// Switches are numbered in lexicographic order of their strings; the label
// is the string ("0121"), with symbols separated by dots when d ≥ 10
// ("0.10.3"). Ports: hosts on 1..hosts, cables on the next free ports in
// order of creation (by source string, then by x). Coords and Group are
// nil; Bisection is 0 (not known in closed form).
func Kautz(d, k, hosts int) (*Topology, error) {
	const kind = "kautz"
	if d < 1 {
		return nil, paramError(kind, "degree d=%d, expected >= 1", d)
	}
	if k < 1 {
		return nil, paramError(kind, "string length k=%d, expected >= 1", k)
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per switch, expected >= 0", hosts)
	}
	n := d + 1
	for range k - 1 {
		n = mulCap(n, d)
	}
	if err := checkLIDBudget(kind, n, mulCap(n, hosts)); err != nil {
		return nil, err
	}

	str := make([]int, k)  // symbols of the current vertex
	next := make([]int, k) // symbols of its successor
	deg := make([]int, n)  // cables per switch
	var arcs [][2]int      // cables, in creation order
	labels := make([]string, n)
	sep := ""
	if d >= 10 {
		sep = "."
	}
	for u := range n {
		kautzDecode(u, d, str)
		labels[u] = fmtInts(str, sep)
		copy(next, str[1:])
		for x := 0; x <= d; x++ {
			if x == str[k-1] {
				continue
			}
			next[k-1] = x
			v := kautzEncode(next, d)
			// The reverse arc v→u exists iff u = v_2…v_k y, i.e. u
			// alternates and x = s_(k−1) (always when k = 1).
			if u > v && (k == 1 || (x == str[k-2] && kautzAlternates(str))) {
				continue // added as the arc v→u
			}
			arcs = append(arcs, [2]int{u, v})
			deg[u]++
			deg[v]++
		}
	}
	maxDeg := 0
	for _, x := range deg {
		maxDeg = max(maxDeg, x)
	}
	radix := hosts + maxDeg
	if radix > fabric.MaxPorts {
		return nil, paramError(kind, "d=%d k=%d and %d hosts need %d ports, expected at most %d", d, k, hosts, radix, fabric.MaxPorts)
	}
	s := newSpec(kind, fmt.Sprintf("d=%d k=%d hosts=%d", d, k, hosts), radix)
	for _, l := range labels {
		s.addSwitch(l, hosts)
	}
	s.cables = make([]cable, 0, len(arcs))
	for _, a := range arcs {
		s.link(a[0], a[1])
	}
	return s.build()
}

// kautzDecode writes into s the Kautz string of index i, where index order
// is lexicographic order: s_1 is i's leading base-d "digit" scaled by
// d^(k−1), and each later symbol is the t-th symbol (t < d) other than its
// predecessor.
func kautzDecode(i, d int, s []int) {
	k := len(s)
	for j := k - 1; j >= 1; j-- {
		s[j] = i % d // offset t, mapped to a symbol below
		i /= d
	}
	s[0] = i
	for j := 1; j < k; j++ {
		if s[j] >= s[j-1] {
			s[j]++
		}
	}
}

// kautzEncode is the inverse of kautzDecode.
func kautzEncode(s []int, d int) int {
	i := s[0]
	for j := 1; j < len(s); j++ {
		t := s[j]
		if t > s[j-1] {
			t--
		}
		i = i*d + t
	}
	return i
}

// kautzAlternates reports whether s has the form abab….
func kautzAlternates(s []int) bool {
	for j := 2; j < len(s); j++ {
		if s[j] != s[j-2] {
			return false
		}
	}
	return true
}

func init() {
	register(Generator{
		Kind:    "kautz",
		Short:   "Kautz graph K(d,k) as a cabled fabric; antiparallel arc pairs share one cable",
		Example: "--d 7 --k 3 --hosts 6",
		Params: []Param{
			{"d", "7", "out-degree of the Kautz digraph (alphabet of d+1 symbols)"},
			{"k", "3", "string length (directed diameter)"},
			{"hosts", "6", "hosts per switch"},
		},
		Build: func(v Values) (*Topology, error) {
			d, k, h := v.Int("d"), v.Int("k"), v.Int("hosts")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return Kautz(d, k, h)
		},
	})
}
