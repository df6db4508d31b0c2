package topo

import (
	"fmt"

	"github.com/nuesm/nuesm/fabric"
)

// SlimFly builds the Slim Fly of Besta and Hoefler (SC14, §III, cited by
// RSI, seed 000, §III) on the McKay–Miller–Širáň (MMS) graph of a prime q,
// with hosts per router.
//
// Write q = 4w + δ with δ ∈ {−1, 0, 1}; every odd prime has δ = ±1 (δ = 0
// would need q a power of 2, i.e. arithmetic in GF(2^m), which this
// generator does not implement; prime powers in general are rejected). Let
// ξ be the smallest primitive root mod q and define the generator sets
//
//	δ = +1:  X = {ξ^0, ξ^2, …, ξ^(q−3)}            X' = {ξ^1, ξ^3, …, ξ^(q−2)}
//	δ = −1:  X = {ξ^0, ξ^2, …, ξ^(2w−2)} ∪ {ξ^(2w−1), ξ^(2w+1), …, ξ^(4w−3)}
//	         X' = {ξ^1, ξ^3, …, ξ^(2w−1)} ∪ {ξ^(2w), ξ^(2w+2), …, ξ^(4w−2)}
//
// (both symmetric: x ∈ X ⇔ −x ∈ X). The 2q² routers are (0, x, y) and
// (1, m, c) for x, y, m, c ∈ F_q, and
//
//	(0, x, y) ~ (0, x, y')  iff  y − y' ∈ X
//	(1, m, c) ~ (1, m, c')  iff  c − c' ∈ X'
//	(0, x, y) ~ (1, m, c)   iff  y = m·x + c
//
// which gives a (3q − δ)/2-regular graph of diameter 2: q = 3, 5, 7 give
// 18, 50, 98 routers of degree 5, 7, 11. The tests check degree and
// diameter by BFS for every prime up to 31.
//
// Switch order: (0, x, y) at index x·q + y, then (1, m, c) at q² + m·q + c.
// Labels and Coords are (s, x, y) / (s, m, c); Group is s·q + x (the 2q
// columns of q routers that the Slim Fly paper calls groups). Hosts take
// ports 1..hosts, router cables the following ports in the order above.
// Radix = hosts + (3q − δ)/2. O(q³) to build.
func SlimFly(q, hosts int) (*Topology, error) {
	const kind = "slimfly"
	if q < 3 || !sfIsPrime(q) {
		return nil, paramError(kind, "q = %d, expected an odd prime (prime powers and q = 2 are not supported)", q)
	}
	if hosts < 0 {
		return nil, paramError(kind, "%d hosts per router, expected >= 0", hosts)
	}
	deg := sfDegree(q)
	radix := hosts + deg
	if radix > fabric.MaxPorts {
		return nil, paramError(kind, "q = %d with %d hosts needs radix %d, more than %d ports", q, hosts, radix, fabric.MaxPorts)
	}
	if err := directLIDs(kind, 2*q*q, hosts); err != nil {
		return nil, err
	}
	s := newSpec(kind, fmt.Sprintf("q=%d hosts=%d", q, hosts), radix)
	for sub := 0; sub < 2; sub++ {
		for x := 0; x < q; x++ {
			for y := 0; y < q; y++ {
				c := []int{sub, x, y}
				s.addSwitch(coordLabel(c), hosts)
				s.coords = append(s.coords, c)
				s.group = append(s.group, sub*q+x)
			}
		}
	}
	for _, e := range mmsEdges(q) {
		s.link(e[0], e[1])
	}
	return s.build()
}

// sfDegree returns the MMS degree (3q − δ)/2 of an odd prime q.
func sfDegree(q int) int {
	delta := 1
	if q%4 == 3 {
		delta = -1
	}
	return (3*q - delta) / 2
}

// mmsEdges lists the edges of the MMS graph of an odd prime q over the
// vertex numbering of SlimFly (see there), each once, lower index first,
// in a deterministic order: the (0, x, ·) columns, the (1, m, ·) columns,
// then the cross edges by (x, y, m).
func mmsEdges(q int) [][2]int {
	X, Xp := mmsGenerators(q)
	inX := make([]bool, q)
	inXp := make([]bool, q)
	for _, v := range X {
		inX[v] = true
	}
	for _, v := range Xp {
		inXp[v] = true
	}
	var edges [][2]int
	for sub, in := range [2][]bool{inX, inXp} {
		base := sub * q * q
		for x := 0; x < q; x++ {
			for y := 0; y < q; y++ {
				for y2 := y + 1; y2 < q; y2++ {
					if in[y2-y] {
						edges = append(edges, [2]int{base + x*q + y, base + x*q + y2})
					}
				}
			}
		}
	}
	for x := 0; x < q; x++ {
		for y := 0; y < q; y++ {
			for m := 0; m < q; m++ {
				c := ((y-m*x)%q + q) % q
				edges = append(edges, [2]int{x*q + y, q*q + m*q + c})
			}
		}
	}
	return edges
}

// mmsGenerators returns the generator sets X and X' of the MMS graph of an
// odd prime q (see SlimFly), as residues mod q.
func mmsGenerators(q int) (X, Xp []int) {
	xi := sfPrimitiveRoot(q)
	pow := make([]int, q) // pow[i] = ξ^i mod q
	pow[0] = 1
	for i := 1; i < q; i++ {
		pow[i] = pow[i-1] * xi % q
	}
	if q%4 == 1 {
		for i := 0; i <= q-3; i += 2 {
			X = append(X, pow[i])
			Xp = append(Xp, pow[i+1])
		}
		return X, Xp
	}
	w := (q + 1) / 4
	for i := 0; i <= 2*w-2; i += 2 {
		X = append(X, pow[i])
	}
	for i := 2*w - 1; i <= 4*w-3; i += 2 {
		X = append(X, pow[i])
	}
	for i := 1; i <= 2*w-1; i += 2 {
		Xp = append(Xp, pow[i])
	}
	for i := 2 * w; i <= 4*w-2; i += 2 {
		Xp = append(Xp, pow[i])
	}
	return X, Xp
}

// sfPrimitiveRoot returns the smallest primitive root modulo the prime q.
func sfPrimitiveRoot(q int) int {
	var factors []int
	n := q - 1
	for f := 2; f*f <= n; f++ {
		if n%f == 0 {
			factors = append(factors, f)
			for n%f == 0 {
				n /= f
			}
		}
	}
	if n > 1 {
		factors = append(factors, n)
	}
	for g := 2; g < q; g++ {
		ok := true
		for _, f := range factors {
			if sfPowMod(g, (q-1)/f, q) == 1 {
				ok = false
				break
			}
		}
		if ok {
			return g
		}
	}
	return 1 // q = 2
}

func sfPowMod(b, e, m int) int {
	r := 1
	b %= m
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = r * b % m
		}
		b = b * b % m
	}
	return r
}

func sfIsPrime(n int) bool {
	if n < 2 {
		return false
	}
	for f := 2; f*f <= n; f++ {
		if n%f == 0 {
			return false
		}
	}
	return true
}

func init() {
	register(Generator{
		Kind:    "slimfly",
		Short:   "Slim Fly on the MMS graph of a prime q: 2q² routers, degree (3q−δ)/2, diameter 2 (Besta & Hoefler)",
		Example: "--q 5 --hosts 4",
		Params: []Param{
			{"q", "5", "an odd prime; 2q² routers"},
			{"hosts", "1", "hosts per router"},
		},
		Build: func(v Values) (*Topology, error) {
			q, h := v.Int("q"), v.Int("hosts")
			if err := v.Err(); err != nil {
				return nil, err
			}
			return SlimFly(q, h)
		},
	})
}
