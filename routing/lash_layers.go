package routing

import (
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// turnSpace numbers the possible dependencies (turns) between channels of
// a fabric: the turn from channel c into channel c2 leaving Head[c] is
// tbase[c] + (c2 − Off[Head[c]]). The complete CDG is thus the switch
// graph's CSR read twice; a layer's CDG is a bitset over turn ids, and its
// successors and predecessors are found through the CSR (successors of c:
// channels out of Head[c]; predecessors of c2: the reverses of the
// channels out of Tail[c2]).
type turnSpace struct {
	g     *fabric.Graph
	tbase []int64 // len NumChannels()+1
}

func newTurnSpace(g *fabric.Graph) *turnSpace {
	C := g.NumChannels()
	ts := &turnSpace{g: g, tbase: make([]int64, C+1)}
	for c := 0; c < C; c++ {
		ts.tbase[c+1] = ts.tbase[c] + int64(g.Degree(g.Head[c]))
	}
	return ts
}

// turn returns the id of the dependency c -> c2 (c2 must leave Head[c]).
func (ts *turnSpace) turn(c, c2 int32) int64 {
	return ts.tbase[c] + int64(c2-ts.g.Off[ts.g.Head[c]])
}

// dagLayer is one virtual layer's CDG over channels, kept acyclic with a
// dynamic topological order (Pearce and Kelly, "A Dynamic Topological Sort
// Algorithm for Directed Acyclic Graphs", ACM JEA 11, 2006): ord is a
// permutation of the channels, and every turn c -> c2 of the layer has
// ord[c] < ord[c2].
type dagLayer struct {
	turns []uint64
	ord   []int32
}

func (ts *turnSpace) newLayer() *dagLayer {
	C := ts.g.NumChannels()
	L := &dagLayer{turns: make([]uint64, (ts.tbase[C]+63)/64), ord: make([]int32, C)}
	for c := range L.ord {
		L.ord[c] = int32(c)
	}
	return L
}

func (L *dagLayer) has(t int64) bool { return L.turns[t>>6]&(1<<(t&63)) != 0 }
func (L *dagLayer) set(t int64)      { L.turns[t>>6] |= 1 << (t & 63) }
func (L *dagLayer) clear(t int64)    { L.turns[t>>6] &^= 1 << (t & 63) }

// dagScratch is the reusable work space of tryAdd (one per goroutine).
type dagScratch struct {
	mark  []uint32 // per channel: stamp of the last search that visited it
	stamp uint32
	stack []int32
	fwd   []int64 // ord<<32 | channel of the forward search's vertices
	bwd   []int64 // same for the backward search
	pos   []int32
	added []int64 // turns set by the current tryAdd, for rollback
}

func newDAGScratch(C int) *dagScratch { return &dagScratch{mark: make([]uint32, C)} }

func (sc *dagScratch) next() uint32 {
	sc.stamp++
	if sc.stamp == 0 {
		clear(sc.mark)
		sc.stamp = 1
	}
	return sc.stamp
}

// tryAdd adds the dependencies of a path (its channels in order) to layer L
// when they keep its CDG acyclic, and reports whether it did; a refused
// path leaves the layer's turns as they were. A path that already follows
// the layer's order is accepted in O(len(path)); otherwise each new turn is
// inserted with the Pearce–Kelly search, which only visits channels
// between the turn's ends in the current order. Allocation-free once the
// scratch has grown.
func (ts *turnSpace) tryAdd(L *dagLayer, path []int32, sc *dagScratch) bool {
	mono := true
	for j := 0; j+1 < len(path); j++ {
		if L.ord[path[j]] >= L.ord[path[j+1]] {
			mono = false
			break
		}
	}
	if mono {
		for j := 0; j+1 < len(path); j++ {
			L.set(ts.turn(path[j], path[j+1]))
		}
		return true
	}
	sc.added = sc.added[:0]
	for j := 0; j+1 < len(path); j++ {
		t := ts.turn(path[j], path[j+1])
		if L.has(t) {
			continue
		}
		if !ts.insert(L, path[j], path[j+1], sc) {
			// The order stays valid for the layer without the path's
			// turns, since it was valid with them.
			for _, a := range sc.added {
				L.clear(a)
			}
			return false
		}
		L.set(t)
		sc.added = append(sc.added, t)
	}
	return true
}

// insert makes room for the turn x -> y in L's order, or reports false
// when y already reaches x (the turn would close a cycle). It does not set
// the turn.
func (ts *turnSpace) insert(L *dagLayer, x, y int32, sc *dagScratch) bool {
	g := ts.g
	lb, ub := L.ord[y], L.ord[x]
	if lb > ub {
		return true
	}
	// Forward from y through channels placed before x.
	st := sc.next()
	sc.fwd = sc.fwd[:0]
	sc.stack = append(sc.stack[:0], y)
	sc.mark[y] = st
	for len(sc.stack) > 0 {
		w := sc.stack[len(sc.stack)-1]
		sc.stack = sc.stack[:len(sc.stack)-1]
		sc.fwd = append(sc.fwd, int64(L.ord[w])<<32|int64(w))
		h := g.Head[w]
		off, base := g.Off[h], ts.tbase[w]
		for k := int32(0); k < g.Off[h+1]-off; k++ {
			if !L.has(base + int64(k)) {
				continue
			}
			z := off + k
			if z == x {
				return false
			}
			if L.ord[z] < ub && sc.mark[z] != st {
				sc.mark[z] = st
				sc.stack = append(sc.stack, z)
			}
		}
	}
	// Backward from x through channels placed after y.
	st = sc.next()
	sc.bwd = sc.bwd[:0]
	sc.stack = append(sc.stack[:0], x)
	sc.mark[x] = st
	for len(sc.stack) > 0 {
		w := sc.stack[len(sc.stack)-1]
		sc.stack = sc.stack[:len(sc.stack)-1]
		sc.bwd = append(sc.bwd, int64(L.ord[w])<<32|int64(w))
		t := g.Tail[w]
		k := int64(w - g.Off[t])
		for c := g.Off[t]; c < g.Off[t+1]; c++ {
			z := g.Rev[c] // a channel into t
			if L.ord[z] > lb && sc.mark[z] != st && L.has(ts.tbase[z]+k) {
				sc.mark[z] = st
				sc.stack = append(sc.stack, z)
			}
		}
	}
	// Reorder: the backward set, then the forward set, each in its old
	// relative order, onto the positions they held together.
	slices.Sort(sc.fwd)
	slices.Sort(sc.bwd)
	sc.pos = sc.pos[:0]
	i, j := 0, 0
	for i < len(sc.bwd) || j < len(sc.fwd) {
		if j == len(sc.fwd) || (i < len(sc.bwd) && sc.bwd[i] < sc.fwd[j]) {
			sc.pos = append(sc.pos, int32(sc.bwd[i]>>32))
			i++
		} else {
			sc.pos = append(sc.pos, int32(sc.fwd[j]>>32))
			j++
		}
	}
	n := 0
	for _, set := range [2][]int64{sc.bwd, sc.fwd} {
		for _, v := range set {
			L.ord[int32(v&0xffffffff)] = sc.pos[n]
			n++
		}
	}
	return true
}
