package cdg

import (
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// topoOrder returns a position per vertex of the acyclic g in a
// topological order (KahnOrder).
func topoOrder(g *CSR) []int32 {
	ord := make([]int32, g.NumVertices())
	KahnOrder(ord, func(v int32, fn func(int32) bool) bool {
		for _, w := range g.Succ(v) {
			if !fn(w) {
				return false
			}
		}
		return true
	})
	return ord
}

// orderer keeps the topological order of a State's CDG as dependencies
// are added, after Pearce and Kelly ("A dynamic topological sort
// algorithm for directed acyclic graphs", JEA 2006): a dependency x -> y
// against the order searches forward from y and backward from x within
// the positions between them, finds a cycle when the forward search
// reaches x, and otherwise reorders only the vertices it visited.
type orderer struct {
	g       *fabric.Graph // the base fabric
	tbase   []int64
	turnCh  []int32
	V       int64
	deps    []uint64 // the CDG's dependency bits
	ord     []int32
	pending []uint64 // added dependencies not yet inserted
	pk      *PK
}

func newOrderer(st *State) *orderer {
	b := st.base
	return &orderer{g: b.g, tbase: b.tbase, turnCh: st.baseCh, V: int64(b.V), deps: st.k.live, ord: st.ord}
}

// insertAll inserts the added dependency bits and reports whether the
// CDG stays acyclic.
func (o *orderer) insertAll(added []int64) bool {
	if len(added) == 0 {
		return true
	}
	o.pending = make([]uint64, len(o.deps))
	o.pk = NewPK(len(o.ord))
	for _, b := range added {
		o.pending[b>>6] |= 1 << (b & 63)
	}
	for _, b := range added {
		o.pending[b>>6] &^= 1 << (b & 63)
		turn, vl := b/o.V, b%o.V
		c := o.turnCh[turn]
		n := o.g.Off[o.g.Head[c]] + int32(turn-o.tbase[c])
		if !o.insert(int32(int64(c)*o.V+vl), int32(int64(n)*o.V+vl)) {
			return false
		}
	}
	return true
}

// live reports whether dependency bit b is in the CDG and inserted.
func (o *orderer) live(b int64) bool {
	return (o.deps[b>>6]&^o.pending[b>>6])&(1<<(b&63)) != 0
}

// insert adds x -> y, reporting false when it closes a cycle.
func (o *orderer) insert(x, y int32) bool {
	return o.pk.Insert(o.ord, x, y, o.succ, o.pred)
}

// succ calls fn with every successor of vertex w in the CDG until fn
// returns false, and reports whether it never did.
func (o *orderer) succ(w int32, fn func(int32) bool) bool {
	c, vl := int64(w)/o.V, int64(w)%o.V
	h := o.g.Head[c]
	for k := range int64(o.g.Degree(h)) {
		if o.live((o.tbase[c]+k)*o.V+vl) && !fn(int32((int64(o.g.Off[h])+k)*o.V+vl)) {
			return false
		}
	}
	return true
}

// pred calls fn with every predecessor of vertex w in the CDG: the
// channels into w's tail, turning onto w.
func (o *orderer) pred(w int32, fn func(int32)) {
	c2, vl := int64(w)/o.V, int64(w)%o.V
	h := o.g.Tail[c2]
	k := c2 - int64(o.g.Off[h])
	for e := o.g.Off[h]; e < o.g.Off[h+1]; e++ {
		if c := o.g.Rev[e]; o.live((o.tbase[c]+k)*o.V + vl) {
			fn(int32(int64(c)*o.V + vl))
		}
	}
}

// ReorderPK is the reordering step of Pearce and Kelly's dynamic
// topological sort, after inserting an edge x -> y against the order ord
// (positions per vertex): fwd holds the vertices reached from y, bwd
// those reaching x, within the positions between. It gives bwd, then
// fwd, the positions they held, each keeping its relative order, so
// that ord is topological again. Each set is sorted as keys (position
// in the high half, vertex in the low), and the positions handed out are
// the merge of the two sorted sets. keys is scratch, returned for reuse.
func ReorderPK(ord []int32, fwd, bwd []int32, keys []int64) []int64 {
	keys = keys[:0]
	for _, w := range bwd {
		keys = append(keys, int64(ord[w])<<32|int64(w))
	}
	nb := len(keys)
	for _, w := range fwd {
		keys = append(keys, int64(ord[w])<<32|int64(w))
	}
	b, f := keys[:nb], keys[nb:]
	slices.Sort(b)
	slices.Sort(f)
	i, j := 0, 0
	for _, k := range keys {
		var p int64
		if j == len(f) || (i < len(b) && b[i] < f[j]) {
			p, i = b[i], i+1
		} else {
			p, j = f[j], j+1
		}
		ord[int32(k)] = int32(p >> 32)
	}
	return keys
}
