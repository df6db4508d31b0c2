package cdg

import (
	"math/bits"

	"github.com/nuesm/nuesm/lft"
)

// destTree is what tree needs of one destination.
type destTree struct {
	d    int
	col  []int32 // per switch: the channel it forwards d on, -1: none
	sl   []uint8 // per switch: the SL of its sources (nil: the SL table's)
	dsw  int32
	dvl  uint32 // the VL of d's SL when it depends on d alone
	pair bool   // per-pair SLs: push asks sourceVLs
}

// tree checks every source against destination LID d when every port maps
// SLs by Default, from col, the channel each switch forwards d on (-1:
// none), and sl as dest takes it. The next hops towards d form a forest:
// settle follows them from every switch once, and push marks the paths'
// dependencies from every delivered source, each (switch, VL) once. It
// returns false, having counted nothing, when some source's packets are
// not delivered: dest then finds and reports why (the dependencies set
// are those of delivered sources, which dest sets too).
func (w *walker) tree(d int, col []int32, sl []uint8) bool {
	v, g := w.v, w.v.g
	dsw, dport, term := lft.Target(g, d)
	if dsw < 0 || v.r.Port(dsw, d) != dport {
		return false
	}
	t := destTree{d: d, col: col, sl: sl, dsw: dsw, pair: len(v.r.SL.Pair) > 0}
	t.dvl = 1 << v.r.SL2VL.Default[v.r.SL.Of(-1, 0, d)&0xF]
	mask, ok := w.same(&t)
	if !ok {
		var found int32
		found, mask = w.settle(&t)
		clear(w.vls) // zero between destinations, as dest expects too
		if found != v.compNeed[v.comp[dsw]]-int32(v.need[dsw]) {
			return false // a source switch of the component is not delivered
		}
		w.remember(&t, mask)
	}
	n, self := v.ownSources(dsw, term)
	if n > 0 {
		mask |= w.sourceVLs(dsw, d, term, self && v.opt.SwitchSources, sl)
	}
	w.delivered(dsw, n)
	w.vlMask |= mask
	return true
}

// treeMemo is, per destination switch, the last destination LID on it
// whose tree a walker settled, all its sources delivered (0: none), with
// the VLs of its sources' paths and its dvl.
type treeMemo struct {
	lid  []int32
	mask []uint32
	dvl  []uint32
}

// same reports whether t's destination has the paths of the last one its
// walker settled on the same switch, whose mask it returns: the same next
// hop at every other switch and the same SLs from every source (per
// source switch, or one per destination). Their dependencies are the
// same bits, which that walk set already. Destinations that share a tree
// (Nue's shared searches: the LIDs of a switch in one layer) are thus
// settled once; a walker counting per destination or collecting its own
// bits settles every one.
func (w *walker) same(t *destTree) (uint32, bool) {
	m := &w.memo
	if m.lid == nil || t.pair || w.cnt != nil || w.own != nil {
		return 0, false
	}
	v, d, S := w.v, t.d, int32(len(m.lid))
	d0 := int(m.lid[t.dsw])
	if d0 == 0 || m.dvl[t.dsw] != t.dvl && t.sl == nil {
		return 0, false
	}
	if !w.sameHops(d, d0, t.col, t.dsw) {
		return 0, false
	}
	if t.sl != nil {
		for x := int32(0); x < S; x++ {
			if row := v.r.SL.SrcRow(x); row[d] != row[d0] {
				return 0, false
			}
		}
	}
	// The next destination on dsw compares with this one: mostly in the
	// same block.
	m.lid[t.dsw] = int32(d)
	return m.mask[t.dsw], true
}

// sameHops reports whether every switch but dsw forwards LID d (next
// hops col) on the channel it forwards d0 on: from the block's columns
// when d0 is in the walker's block, else from the tables (the same port).
func (w *walker) sameHops(d, d0 int, col []int32, dsw int32) bool {
	v, S := w.v, int32(len(col))
	if w.inBlock && d0 >= w.blk0 {
		col0 := w.cb[(d0-w.blk0)*int(S):][:S]
		for x := range S {
			if col[x] != col0[x] && x != dsw {
				return false
			}
		}
		return true
	}
	for x := range S {
		if row := v.r.Row(x); row[d] != row[d0] && x != dsw {
			return false
		}
	}
	return true
}

// remember keeps t, settled with every source delivered over paths of
// VLs mask, for same.
func (w *walker) remember(t *destTree, mask uint32) {
	v, m := w.v, &w.memo
	if t.pair || w.cnt != nil || w.own != nil || t.sl == nil && v.r.SL.BySrc != nil {
		return
	}
	if m.lid == nil {
		S := v.g.NumSwitches()
		m.lid, m.mask, m.dvl = make([]int32, S), make([]uint32, S), make([]uint32, S)
	}
	m.lid[t.dsw], m.mask[t.dsw], m.dvl[t.dsw] = int32(t.d), mask, t.dvl
}

// ownSources returns the sources on dsw, the switch of a destination
// (terminal term, -1 for the switch's own LID), as dest counts them (a
// port is not a source of its own LID, a switch not of its own), and
// whether dsw's own port is one of them.
func (v *verifier) ownSources(dsw, term int32) (n int64, self bool) {
	n, self = int64(v.nsrc[dsw]), v.opt.SwitchSources || v.opt.SwitchDelivery
	if term >= 0 {
		n--
	} else {
		self = false
	}
	if self {
		n++
	}
	return n, self
}

// delivered counts every source of dsw's component as delivered to a
// destination on dsw, n of them on dsw itself (ownSources).
func (w *walker) delivered(dsw int32, n int64) {
	v, cdsw := w.v, w.v.comp[dsw]
	pairs := v.compN[cdsw] - v.base[dsw] + n
	w.pairs += pairs
	w.deliv += pairs
	w.unconn += v.totalN - v.compN[cdsw]
}

// settle follows the next hops from every switch until a switch settled
// before, settles the switches on the way alike, and pushes the VLs of
// every switch settled as delivered. It returns how many of those but dsw
// have sources (verifier.need) and the VLs they use.
func (w *walker) settle(t *destTree) (found int32, mask uint32) {
	head, st, need, col := w.v.g.Head, w.st, w.v.need, t.col
	w.tstamp++
	if w.tstamp >= 1<<30 {
		clear(st)
		w.tstamp = 1
	}
	stamp := w.tstamp << 2
	ok := stamp | stOK
	st[t.dsw] = ok
	for u, c := range col {
		if st[u] == ok || c < 0 {
			continue
		}
		if h := head[c]; st[h] == ok { // the common case: the next hop is settled
			st[u] = ok
			found += int32(need[u])
			mask |= w.push(t, int32(u))
			continue
		}
		path := w.path[:0]
		res := stBad
		for x := int32(u); ; {
			if s := st[x]; s&^3 == stamp {
				if s&3 == stOK {
					res = stOK
				}
				break
			}
			st[x] = stamp | stVisiting
			path = append(path, x)
			c := col[x]
			if c < 0 {
				break
			}
			x = head[c]
		}
		for _, x := range path {
			st[x] = stamp | res
		}
		if res == stOK {
			for _, x := range path {
				found += int32(need[x])
				mask |= w.push(t, x)
			}
		}
		w.path = path
	}
	return found, mask
}

// push marks the dependencies of the paths from switch u's sources, which
// are delivered: along the next hops, a dependency per VL for every two
// consecutive hops, until every VL has passed that way before (vls). It
// returns the VLs of u's sources.
func (w *walker) push(t *destTree, u int32) uint32 {
	v := w.v
	var own uint32
	switch {
	case v.srcAll[u] == 0:
		return 0
	case t.pair:
		own = w.sourceVLs(u, t.d, -1, v.opt.SwitchSources, nil)
	case t.sl != nil:
		own = 1 << v.r.SL2VL.Default[t.sl[u]&0xF]
	case v.r.SL.BySrc != nil:
		own = 1 << v.r.SL2VL.Default[v.r.SL.Of(u, 0, t.d)&0xF]
	default:
		own = t.dvl
	}
	head, off, tbase, vls, col := v.g.Head, v.g.Off, v.tbase, w.vls, t.col
	V := int64(v.V)
	for x, m := u, own; x != t.dsw; {
		if m &^= vls[x]; m == 0 {
			break
		}
		vls[x] |= m
		c := col[x]
		h := head[c]
		if h == t.dsw {
			break
		}
		base := (tbase[c] + int64(col[h]-off[h])) * V
		for b := m; b != 0; b &= b - 1 {
			w.set(base + int64(bits.TrailingZeros32(b)))
		}
		x = h
	}
	return own
}
