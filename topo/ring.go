package topo

import "fmt"

// Ring builds a ring of n switches with hosts per switch. With shortcut,
// one extra cable joins switches shortcut[0] and shortcut[1] (0-based), as
// in the 5-ring with a shortcut of the thesis' Figure 6 (n3–n5 there,
// Ring(5, 1, [2]int{2, 4}) here). Pass nil for no shortcut.
func Ring(n, hosts int, shortcut []int) (*Topology, error) {
	const kind = "ring"
	if n < 3 {
		return nil, paramError(kind, "%d switches, expected at least 3", n)
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per switch, expected >= 0", hosts)
	}
	params := fmt.Sprintf("switches=%d hosts=%d", n, hosts)
	if shortcut != nil {
		if len(shortcut) != 2 {
			return nil, paramError(kind, "shortcut %v, expected two switch indices", shortcut)
		}
		a, b := shortcut[0], shortcut[1]
		if a < 0 || b < 0 || a >= n || b >= n || a == b {
			return nil, paramError(kind, "shortcut %d-%d, expected two distinct switches in 0..%d", a, b, n-1)
		}
		if d := (a - b + n) % n; d == 1 || d == n-1 {
			return nil, paramError(kind, "shortcut %d-%d joins ring neighbours", a, b)
		}
		params += fmt.Sprintf(" shortcut=%d,%d", a, b)
	}
	radix := hosts + 2
	if shortcut != nil {
		radix++
	}
	s := newSpec(kind, params, radix)
	for i := 0; i < n; i++ {
		s.addSwitch(fmt.Sprintf("r%d", i), hosts)
		s.coords = append(s.coords, []int{i})
	}
	for i := 0; i < n; i++ {
		s.link(i, (i+1)%n)
	}
	if shortcut != nil {
		s.link(shortcut[0], shortcut[1])
	}
	s.bisection = 2
	return s.build()
}

func init() {
	register(Generator{
		Kind:    "ring",
		Short:   "ring of switches, optionally with one shortcut cable (thesis Figure 6)",
		Example: "--switches 5 --hosts 1 --shortcut 2,4",
		Params: []Param{
			{"switches", "5", "number of switches"},
			{"hosts", "1", "hosts per switch"},
			{"shortcut", "", "two 0-based switch indices to join with an extra cable, e.g. 2,4"},
		},
		Build: func(v Values) (*Topology, error) {
			n, h := v.Int("switches"), v.Int("hosts")
			var sc []int
			if v.Has("shortcut") {
				sc = v.Ints("shortcut")
			}
			if err := v.Err(); err != nil {
				return nil, err
			}
			return Ring(n, h, sc)
		},
	})
}
