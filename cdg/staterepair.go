package cdg

import (
	"slices"

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
	m := mapFabrics(st.v.g, g, false)
	if m == nil {
		return nil, nil, false
	}
	broken, gone, same := m.dirty(st.v.r, r)
	if !same {
		return nil, nil, false
	}
	cnt, perVL := slices.Clone(st.cnt), slices.Clone(st.perVL)
	if !st.subtract(cnt, perVL, broken, gone) {
		return nil, nil, false
	}
	return broken, turnSets(v, st.base, m.compose(st.toBase), cnt), true
}

// turnSets returns, per VL, the bitset over v's turns of the
// dependencies cnt counts (laid out for base; toBase maps v's channels).
func turnSets(v, base *verifier, toBase []int32, cnt []uint32) [][]uint64 {
	g, gb, V := v.g, base.g, int64(v.V)
	turns := make([][]uint64, V)
	nwords := (v.tbase[g.NumChannels()] + 63) / 64
	for vl := range turns {
		turns[vl] = make([]uint64, nwords)
	}
	for c := range int32(g.NumChannels()) {
		h, cb := g.Head[c], toBase[c]
		hb := gb.Head[cb]
		for k := range int32(g.Degree(h)) {
			kb := toBase[g.Off[h]+k] - gb.Off[hb]
			from, t := (base.tbase[cb]+int64(kb))*V, v.tbase[c]+int64(k)
			for vl := range V {
				if cnt[from+vl] != 0 {
					turns[vl][t>>6] |= 1 << (t & 63)
				}
			}
		}
	}
	return turns
}
