package flitsim

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// workload is a Traffic compiled against a Network: destination tables
// and per-source rates. It is built once per run (or per Bound) and read
// only afterwards.
type workload struct {
	tr      Traffic
	classes []Class
	n       int32 // nodes
	active  []bool
	sources int

	perm []int32 // Permutation, BitReversal, Transpose: destination or -1

	// Neighbor, NextGroup, GroupHotSpot: candidates of node i are
	// cand[candOff[key[i]]:candOff[key[i]+1]], key[i] < 0 = idle.
	key     []int32
	candOff []int32
	cand    []int32

	compute []int32 // IO: the compute nodes; position of node i in pos[i]
	pos     []int32 // IO: position among compute; GroupLocal: among cand of its group
}

// compile builds the workload of t (defaults applied, validated) on n;
// seed draws the random permutation.
func compile(n *Network, t Traffic, seed uint64) (*workload, error) {
	N := int32(n.NumNodes())
	w := &workload{tr: t, classes: t.classes(), n: N, active: make([]bool, N)}
	for i := range w.active {
		w.active[i] = true
	}
	if err := w.destinations(n, seed); err != nil {
		return nil, err
	}
	if w.perm != nil {
		for i, d := range w.perm {
			if d == int32(i) {
				w.perm[i], w.active[i] = -1, false
			}
		}
	}
	if w.key != nil {
		least := int32(1) // candidates a source needs
		if t.Pattern == GroupLocal {
			least = 2 // its group holds the source itself
		}
		for i, k := range w.key {
			if k < 0 || w.candOff[k+1]-w.candOff[k] < least {
				w.key[i], w.active[i] = -1, false
			}
		}
	}
	for _, a := range w.active {
		if a {
			w.sources++
		}
	}
	if w.sources == 0 {
		return nil, fmt.Errorf("flitsim: traffic %s has no active source on this network: %w", t.Pattern, ErrConfig)
	}
	return w, nil
}

// destinations builds the pattern's destination tables: a permutation,
// neighbour or group candidates, the compute nodes of IO.
func (w *workload) destinations(n *Network, seed uint64) error {
	t, N := w.tr, w.n
	switch t.Pattern {
	case Permutation:
		// Sattolo's algorithm: a uniformly random cyclic permutation.
		rng := rand.New(rand.NewPCG(seed, 0x7065726d)) // "perm"
		order := make([]int32, N)
		for i := range order {
			order[i] = int32(i)
		}
		for i := N - 1; i > 0; i-- {
			j := rng.Int32N(i)
			order[i], order[j] = order[j], order[i]
		}
		w.perm = make([]int32, N)
		for k := range order {
			w.perm[order[k]] = order[(int32(k)+1)%N]
		}
	case BitReversal:
		if N&(N-1) != 0 {
			return fmt.Errorf("flitsim: bit reversal needs a power-of-two number of nodes, have %d: %w", N, ErrConfig)
		}
		b := bits.Len32(uint32(N)) - 1
		w.perm = make([]int32, N)
		for i := range w.perm {
			w.perm[i] = int32(bits.Reverse32(uint32(i)) >> (32 - b))
			if b == 0 {
				w.perm[i] = 0
			}
		}
	case Transpose:
		m := int32(0)
		for m*m < N {
			m++
		}
		if m*m != N {
			return fmt.Errorf("flitsim: transpose needs a square number of nodes, have %d: %w", N, ErrConfig)
		}
		w.perm = make([]int32, N)
		for i := range w.perm {
			r, c := int32(i)/m, int32(i)%m
			w.perm[i] = c*m + r
		}
	case Neighbor:
		w.neighbors(n)
	case NextGroup, GroupHotSpot, GroupLocal:
		if err := w.groups(n); err != nil {
			return err
		}
	case IO:
		w.pos = make([]int32, N)
		for i, io := range t.IONode {
			w.pos[i] = -1
			if io >= 0 {
				w.pos[i] = int32(len(w.compute))
				w.compute = append(w.compute, int32(i))
			} else {
				w.active[i] = false
			}
		}
		if len(w.compute) < 2 && t.IORatio < 1 {
			return fmt.Errorf("flitsim: io traffic needs two compute nodes, have %d: %w", len(w.compute), ErrConfig)
		}
	}
	return nil
}

// neighbors lists, per switch with nodes, the nodes of the nearest other
// switches that have nodes (BFS over the switch graph).
func (w *workload) neighbors(n *Network) {
	g := n.g
	S := int32(g.NumSwitches())
	nodesOf := make([][]int32, S)
	for i, s := range n.nodeSw {
		nodesOf[s] = append(nodesOf[s], int32(i))
	}
	w.key = make([]int32, w.n)
	w.candOff = make([]int32, 1, S+1)
	dist, queue := make([]int32, S), make([]int32, S)
	for s := int32(0); s < S; s++ {
		if len(nodesOf[s]) > 0 {
			g.BFS(s, dist, queue)
			best := int32(-1)
			for t := int32(0); t < S; t++ {
				if t != s && dist[t] > 0 && len(nodesOf[t]) > 0 && (best < 0 || dist[t] < best) {
					best = dist[t]
				}
			}
			for t := int32(0); t < S; t++ {
				if best > 0 && t != s && dist[t] == best {
					w.cand = append(w.cand, nodesOf[t]...)
				}
			}
		}
		w.candOff = append(w.candOff, int32(len(w.cand)))
	}
	copy(w.key, n.nodeSw)
}

// groups lists the candidate destinations per group.
func (w *workload) groups(n *Network) error {
	t := &w.tr
	G := 0
	for _, g := range t.Groups {
		G = max(G, g+1)
	}
	members := make([][]int32, G)
	for i, s := range n.nodeSw {
		g := t.Groups[s]
		members[g] = append(members[g], int32(i))
	}
	w.candOff = make([]int32, 1, G+1)
	for g := 0; g < G; g++ {
		target := (g + t.GroupOffset) % G
		if t.Pattern == GroupHotSpot {
			target = -1
			if g == t.SrcGroup && t.DstGroup < G {
				target = t.DstGroup
			}
		}
		if t.Pattern == GroupLocal {
			target = g
		}
		if target >= 0 && (target != g || t.Pattern == GroupLocal) {
			w.cand = append(w.cand, members[target]...)
		}
		w.candOff = append(w.candOff, int32(len(w.cand)))
	}
	w.key = make([]int32, w.n)
	for i, s := range n.nodeSw {
		w.key[i] = int32(t.Groups[s])
	}
	if t.Pattern == GroupLocal {
		w.pos = make([]int32, w.n)
		for _, m := range members {
			for j, i := range m {
				w.pos[i] = int32(j)
			}
		}
	}
	if t.Pattern == GroupHotSpot && (t.SrcGroup >= G || t.DstGroup >= G) {
		return fmt.Errorf("flitsim: group hot spot %d -> %d, the fabric has groups 0..%d: %w", t.SrcGroup, t.DstGroup, G-1, ErrConfig)
	}
	return nil
}

// uniformOther draws a node other than src uniformly from 0..n-1.
func uniformOther(rng *rand.Rand, n, src int32) int32 {
	d := rng.Int32N(n - 1)
	if d >= src {
		d++
	}
	return d
}

// dest draws the destination and class of a message from active source
// src. Shift destinations come from the phase, not from here.
func (w *workload) dest(src int32, rng *rand.Rand) (int32, uint8) {
	t := &w.tr
	switch t.Pattern {
	case Uniform, Shift:
		return uniformOther(rng, w.n, src), 0
	case Permutation, BitReversal, Transpose:
		return w.perm[src], 0
	case HotSpot:
		if src != t.HotNode && rng.Float64() < t.HotFraction {
			return t.HotNode, 1
		}
		return uniformOther(rng, w.n, src), 0
	case Neighbor, NextGroup, GroupHotSpot:
		k := w.key[src]
		lo, hi := w.candOff[k], w.candOff[k+1]
		return w.cand[lo+rng.Int32N(hi-lo)], 0
	case GroupLocal:
		k := w.key[src]
		lo, hi := w.candOff[k], w.candOff[k+1]
		return w.cand[lo+uniformOther(rng, hi-lo, w.pos[src])], 0
	case IO:
		if rng.Float64() < t.IORatio {
			return t.IONode[src], 1
		}
		c := int32(len(w.compute))
		return w.compute[uniformOther(rng, c, w.pos[src])], 0
	}
	return -1, 0
}

// meanPackets returns the mean number of packets of a message from src.
func (w *workload) meanPackets(src int32) float64 {
	t := &w.tr
	m0 := float64(w.classes[0].MessagePackets)
	switch {
	case t.Pattern == HotSpot && src != t.HotNode:
		return (1-t.HotFraction)*m0 + t.HotFraction*float64(w.classes[1].MessagePackets)
	case t.Pattern == IO:
		return (1-t.IORatio)*m0 + t.IORatio*float64(w.classes[1].MessagePackets)
	}
	return m0
}

// dist calls fn for every destination of source src with the fraction of
// src's flits it receives (the fractions sum to 1). Shift counts as
// uniform: over the whole exchange every pair carries one message.
func (w *workload) dist(src int32, fn func(dst int32, frac float64)) {
	t := &w.tr
	uniform := func(scale float64) {
		f := scale / float64(w.n-1)
		for d := int32(0); d < w.n; d++ {
			if d != src {
				fn(d, f)
			}
		}
	}
	classFrac := func(p float64) float64 { // fraction of flits in class 1
		m0, m1 := float64(w.classes[0].MessagePackets), float64(w.classes[1].MessagePackets)
		if p == 0 {
			return 0
		}
		return p * m1 / (p*m1 + (1-p)*m0)
	}
	switch t.Pattern {
	case Uniform, Shift:
		uniform(1)
	case Permutation, BitReversal, Transpose:
		if d := w.perm[src]; d >= 0 {
			fn(d, 1)
		}
	case HotSpot:
		if src == t.HotNode {
			uniform(1)
			return
		}
		h := classFrac(t.HotFraction)
		fn(t.HotNode, h)
		uniform(1 - h)
	case Neighbor, NextGroup, GroupHotSpot:
		if k := w.key[src]; k >= 0 {
			c := w.cand[w.candOff[k]:w.candOff[k+1]]
			for _, d := range c {
				fn(d, 1/float64(len(c)))
			}
		}
	case GroupLocal:
		if k := w.key[src]; k >= 0 {
			c := w.cand[w.candOff[k]:w.candOff[k+1]]
			for _, d := range c {
				if d != src {
					fn(d, 1/float64(len(c)-1))
				}
			}
		}
	case IO:
		if t.IONode[src] < 0 {
			return
		}
		h := classFrac(t.IORatio)
		if h > 0 {
			fn(t.IONode[src], h)
		}
		if c := len(w.compute); h < 1 && c > 1 {
			for _, d := range w.compute {
				if d != src {
					fn(d, (1-h)/float64(c-1))
				}
			}
		}
	}
}
