package routing

import (
	"math/bits"

	"github.com/nuesm/nuesm/cdg"
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

// eachSucc calls fn with the channels c turns into in layer L, in port
// order, until fn returns false (then it returns false). c's turns are
// the bits tbase[c]..tbase[c+1] of L, read a word at a time.
func (ts *turnSpace) eachSucc(L *dagLayer, c int32, fn func(c2 int32) bool) bool {
	lo, hi := ts.tbase[c], ts.tbase[c+1]
	first := ts.g.Off[ts.g.Head[c]]
	for i := lo; i < hi; i = (i | 63) + 1 {
		w := L.turns[i>>6] >> (i & 63)
		if n := hi - i; n < 64 {
			w &= 1<<n - 1
		}
		for ; w != 0; w &= w - 1 {
			if !fn(first + int32(i-lo+int64(bits.TrailingZeros64(w)))) {
				return false
			}
		}
	}
	return true
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

// dagScratch is the reusable work space of tryAdd and insert (one per
// goroutine): the Pearce–Kelly search state, and the layer's successors
// and predecessors as cdg.PK asks for them, bound once to the layer
// being inserted into.
type dagScratch struct {
	pk    *cdg.PK
	ts    *turnSpace
	L     *dagLayer
	succ  func(c int32, fn func(c2 int32) bool) bool
	pred  func(c int32, fn func(c0 int32))
	added []int64 // turns set by the current tryAdd, for rollback
}

func newDAGScratch(C int) *dagScratch {
	sc := &dagScratch{pk: cdg.NewPK(C)}
	sc.succ, sc.pred = sc.layerSucc, sc.layerPred
	return sc
}

// layerSucc calls fn with the channels c turns into in the current
// layer, in port order, until fn returns false.
func (sc *dagScratch) layerSucc(c int32, fn func(c2 int32) bool) bool {
	return sc.ts.eachSucc(sc.L, c, fn)
}

// layerPred calls fn with the channels that turn into c in the current
// layer: the reverses of the channels out of c's tail.
func (sc *dagScratch) layerPred(c int32, fn func(c0 int32)) {
	g, turns, tbase := sc.ts.g, sc.L.turns, sc.ts.tbase
	t := g.Tail[c]
	k := int64(c - g.Off[t])
	for _, z := range g.Rev[g.Off[t]:g.Off[t+1]] {
		if u := tbase[z] + k; turns[u>>6]&(1<<(u&63)) != 0 {
			fn(z)
		}
	}
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

// insert makes room for the turn x -> y in L's order with cdg.PK, or
// reports false when y already reaches x (the turn would close a cycle).
// It does not set the turn.
func (ts *turnSpace) insert(L *dagLayer, x, y int32, sc *dagScratch) bool {
	sc.ts, sc.L = ts, L
	return sc.pk.Insert(L.ord, x, y, sc.succ, sc.pred)
}
