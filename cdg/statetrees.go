package cdg

import (
	"math/bits"
	"slices"

	"github.com/nuesm/nuesm/lft"
)

// subtractTrees is subtract for a State whose fabric is one component:
// st's routing passed, so every source of every destination is
// delivered along its tree of next hops, and a destination's
// dependencies are what push marks from every switch with sources. It
// follows the next hops from those switches only, without settling
// every switch first, and takes each dependency out of k as push finds
// it (push marks a dependency once per destination). It reports false,
// having changed k, when a tree is not as st's routing had it (a next
// hop missing on a path).
func (st *State) subtractTrees(k *counts, lists ...[]int) bool {
	v := st.v
	g, r := v.g, v.r
	S, V := g.NumSwitches(), int64(v.V)
	head, off, tbase, def := g.Head, g.Off, v.tbase, &r.SL2VL.Default
	var srcs []int32
	for u, a := range v.srcAll {
		if a != 0 {
			srcs = append(srcs, int32(u))
		}
	}
	cb, vls := make([]int32, block*S), make([]uint32, S)
	for _, list := range lists {
		for i := 0; i < len(list); i += block {
			chunk := list[i:min(i+block, len(list))]
			for x := range int32(S) {
				transposeLIDs(cb, S, x, g.PortChannels(x), r.Row(x), chunk)
			}
			for j, d := range chunk {
				col := cb[j*S : (j+1)*S]
				dsw, _, _ := lft.Target(g, d)
				if dsw < 0 {
					return false
				}
				dvl := uint32(1) << def[r.SL.Of(-1, 0, d)&0xF]
				for _, u := range srcs {
					own := dvl
					if r.SL.BySrc != nil {
						own = 1 << def[r.SL.Of(u, 0, d)&0xF]
					}
					for x, m := u, own; x != dsw; {
						if m &^= vls[x]; m == 0 {
							break
						}
						vls[x] |= m
						c := col[x]
						if c < 0 {
							return false
						}
						h := head[c]
						if h == dsw {
							break
						}
						t := tbase[c] + int64(col[h]-off[h])
						if st.turnBase != nil {
							t = int64(st.turnBase[t])
						}
						for b := m; b != 0; b &= b - 1 {
							k.dec(t*V + int64(bits.TrailingZeros32(b)))
						}
						x = h
					}
				}
				clear(vls)
			}
		}
	}
	return true
}

// transposeLIDs writes the channels switch x's entries for the LIDs ds
// lead to into columns: cb[j*S+x] for ds[j], -1 for none.
func transposeLIDs(cb []int32, S int, x int32, pcs []int32, row []uint8, ds []int) {
	for j, d := range ds {
		c := int32(-1)
		if p := row[d]; int(p) < len(pcs) && p != lft.NoPort {
			c = pcs[p]
		}
		cb[j*S+int(x)] = c
	}
}

// treesOnly reports whether subtractTrees applies to st: one component,
// SLs per destination or per source switch.
func (st *State) treesOnly() bool {
	v := st.v
	return !v.cross && len(v.r.SL.Pair) == 0 && v.r.SL2VL.Switch == nil && !slices.ContainsFunc(v.comp, func(c int32) bool { return c != 0 })
}
