package cdg

import (
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// RepairBase returns what a repair of st's routing on g starts from, so
// that it need not walk every destination: the destinations whose paths
// in r run into a cable or switch g lacks (in increasing order), and per
// VL the dependencies of the CA and router traffic towards every other
// destination, as a bitset over g's turns (turn tbase[c]+k is channel c
// followed by the k-th channel out of c's head, tbase[c+1]-tbase[c] the
// head's degree). r must hold st's tables laid out for g, and g must be
// st's fabric less some cables and switches without CA or router ports,
// in one piece; otherwise ok is false.
func (st *State) RepairBase(g *fabric.Graph, r *lft.Routing) (broken []int, turns [][]uint64, ok bool) {
	if st == nil || st.v.opt.SwitchSources || r.CheckShape(g) != nil || checkTables(g, r) != nil {
		return nil, nil, false
	}
	v := newVerifier(g, r, st.v.opt)
	if !st.applies(v) || slices.ContainsFunc(v.comp, func(c int32) bool { return c != 0 }) {
		return nil, nil, false
	}
	m := st.mapTo(g, false)
	if m == nil {
		return nil, nil, false
	}
	broken, gone, same := m.dirty(st.v.r, r)
	if !same {
		return nil, nil, false
	}
	k := st.k.clone()
	if !st.subtract(k, broken, gone) {
		return nil, nil, false
	}
	turns = make([][]uint64, v.V)
	nwords := (v.tbase[g.NumChannels()] + 63) / 64
	for vl := range turns {
		turns[vl] = make([]uint64, nwords)
	}
	tbs := turnBases(v, st.base, m.compose(st.toBase))
	for t, tb := range tbs {
		for b := k.vls(int64(tb)); b != 0; b &= b - 1 {
			turns[bits.TrailingZeros64(b)][t>>6] |= 1 << (t & 63)
		}
	}
	st.memo.Store(&repairMemo{g: g, k: k, turnBase: tbs, lids: broken})
	return broken, turns, true
}

// repairMemo is what RepairBase leaves for the verification of the repair
// that follows (State.Verify on the same fabric): the counts without the
// broken destinations, which it subtracted already.
type repairMemo struct {
	g        *fabric.Graph
	k        *counts
	turnBase []int32 // g's turns -> base's
	lids     []int   // the broken destinations (the LIDs g lost are out too)
}

// takeMemo returns the counts RepairBase left for g without the
// destinations of dirty, and its map of g's turns to base's, when it left
// them for g and its broken destinations are among dirty; nil otherwise.
// It takes them: a memo serves one verification.
func (st *State) takeMemo(g *fabric.Graph, dirty []int) (*counts, []int32) {
	m := st.memo.Swap(nil)
	if m == nil || m.g != g {
		return nil, nil
	}
	rest, i := make([]int, 0, len(dirty)-min(len(dirty), len(m.lids))), 0
	for _, d := range dirty {
		if i < len(m.lids) && m.lids[i] < d {
			return nil, m.turnBase // broken but not dirty: it was subtracted, yet keeps its paths
		}
		if i < len(m.lids) && m.lids[i] == d {
			i++
			continue
		}
		rest = append(rest, d)
	}
	if i != len(m.lids) || !st.subtract(m.k, rest) {
		return nil, m.turnBase
	}
	memosTaken.Add(1)
	return m.k, m.turnBase
}

// memosTaken counts the memos verifications took (for tests).
var memosTaken atomic.Int64

// Covers reports whether g is st's fabric, or st's fabric less some
// cables and switches without CA or router ports: then a routing of g is
// verified against st incrementally (Verify), and st's routing repaired
// for g from st (RepairBase). A fabric that gained a cable or switch st's
// fabric lacks is not covered.
func (st *State) Covers(g *fabric.Graph) bool {
	return st != nil && st.mapTo(g, st.v.opt.SwitchSources) != nil
}
