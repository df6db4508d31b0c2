package nue

import (
	"math/bits"
	"slices"

	"github.com/nuesm/nuesm/fabric"
)

// Turn states in a layer's complete CDG. A turn (a→b) is the dependency a
// packet creates arriving on channel a and leaving on channel b; states at
// or above tEscape are "used" and form the layer's used-turn graph, which
// is kept acyclic.
const (
	tUnused  uint8 = iota
	tBlocked       // would close a cycle among the used turns (for the rest of the layer)
	tEscape        // escape path, fixed before routing
	tUsed          // used by a routed destination
	tWet           // tentatively used by the destination being routed
)

// turnIndex numbers the turns of a compiled fabric: the turns out of
// channel c (into switch Head[c]) are base[c] + i for the i-th channel
// leaving Head[c]. The U-turn slot (back over the same cable) exists but is
// never used. Shared read-only by all layers.
type turnIndex struct {
	g    *fabric.Graph
	base []int32
	from []int32 // turn -> the channel it arrives on
	// words of the per-channel turn bit masks of usedTurns: enough for
	// the largest switch degree.
	words int
}

func newTurnIndex(g *fabric.Graph) *turnIndex {
	ti := &turnIndex{g: g, base: make([]int32, g.NumChannels()+1)}
	maxDeg := 1
	for c := 0; c < g.NumChannels(); c++ {
		d := g.Degree(g.Head[c])
		ti.base[c+1] = ti.base[c] + int32(d)
		maxDeg = max(maxDeg, d)
	}
	ti.words = (maxDeg + 63) / 64
	ti.from = make([]int32, ti.numTurns())
	for c := 0; c < g.NumChannels(); c++ {
		for t := ti.base[c]; t < ti.base[c+1]; t++ {
			ti.from[t] = int32(c)
		}
	}
	return ti
}

// id returns the turn a→b; b must leave the switch a enters.
func (ti *turnIndex) id(a, b int32) int32 {
	return ti.base[a] + b - ti.g.Off[ti.g.Head[a]]
}

// numTurns returns the number of turn slots.
func (ti *turnIndex) numTurns() int { return int(ti.base[len(ti.base)-1]) }

// usedTurns is one layer's complete CDG: the state of every turn, and a
// dynamic topological order of the channels over the used turns. Adding a
// used turn a→b costs O(1) when ord[a] < ord[b]; otherwise a search
// bounded to the channels ordered between b and a decides whether b
// reaches a (a cycle) and, if not, reorders the channels between them
// (see insert). Removing a turn never invalidates the order. Not safe for
// concurrent use.
type usedTurns struct {
	ti    *turnIndex
	state []uint8
	ord   []int32 // channel -> position in the topological order
	at    []int32 // position -> channel
	// Used turns as bit masks, ti.words per channel, so searches visit
	// only used turns: out (bit i: onto the i-th channel leaving Head[c])
	// and in (bit j: from the reverse of the j-th channel leaving
	// Tail[c]; read by layer.relax).
	out, in []uint64
	blk     []uint64 // blocked turns, laid out like in

	// search scratch
	markF     []uint32
	stamp     uint32
	stack, dF []int32

	blocked, used int // counts for statistics
}

func newUsedTurns(ti *turnIndex) *usedTurns {
	C := ti.g.NumChannels()
	u := &usedTurns{
		ti: ti, state: make([]uint8, ti.numTurns()),
		ord: make([]int32, C), at: make([]int32, C),
		out: make([]uint64, C*ti.words), in: make([]uint64, C*ti.words),
		blk:   make([]uint64, C*ti.words),
		markF: make([]uint32, C),
	}
	for c := range u.ord {
		u.ord[c], u.at[c] = int32(c), int32(c)
	}
	return u
}

// seedOrder replaces the initial order by one that every up*/down* path
// respects, where "up" means away from the terminals: channels climbing
// from lower to higher level (lowest level first), then channels between
// switches of one level, then channels descending (highest level first).
// In indirect networks (fat trees, Clos) almost every route goes up then
// down, so most turns then insert in O(1); in direct networks every switch
// is at level 0 and the order stays by channel id. Only valid before any
// turn is used.
func (u *usedTurns) seedOrder(level []int32) {
	g := u.ti.g
	C := g.NumChannels()
	const band = 1 << 20
	key := func(c int32) int64 {
		lt, lh := int64(level[g.Tail[c]]), int64(level[g.Head[c]])
		switch {
		case lh > lt: // up
			return lt
		case lh == lt:
			return band
		default: // down
			return 2*band - lt
		}
	}
	for c := 0; c < C; c++ {
		u.at[c] = int32(c)
	}
	slices.SortStableFunc(u.at, func(a, b int32) int {
		ka, kb := key(a), key(b)
		if ka < kb {
			return -1
		}
		if ka > kb {
			return 1
		}
		return 0
	})
	for i, c := range u.at {
		u.ord[c] = int32(i)
	}
}

// isUsed reports whether turn t is in the used-turn graph.
func (u *usedTurns) isUsed(t int32) bool { return u.state[t] >= tEscape }

// use puts turn a→b into the used-turn graph with state st (tEscape, tUsed
// or tWet) unless it is blocked or would close a cycle, in which case it is
// blocked and use returns false. A turn already used stays as it is.
func (u *usedTurns) use(a, b int32, st uint8) bool {
	t := u.ti.id(a, b)
	switch s := u.state[t]; {
	case s >= tEscape:
		return true
	case s == tBlocked:
		return false
	}
	if !u.insert(a, b) {
		u.state[t] = tBlocked
		u.blocked++
		j := int(u.ti.g.Rev[a] - u.ti.g.Off[u.ti.g.Head[a]])
		u.blk[int(b)*u.ti.words+j>>6] |= 1 << (j & 63)
		return false
	}
	u.state[t] = st
	u.setBits(a, b, true)
	return true
}

// setBits sets or clears the mask bits of turn a→b.
func (u *usedTurns) setBits(a, b int32, on bool) {
	g, W := u.ti.g, u.ti.words
	i := int(b - g.Off[g.Head[a]])
	j := int(g.Rev[a] - g.Off[g.Tail[b]])
	o, n := int(a)*W+i>>6, int(b)*W+j>>6
	if on {
		u.out[o] |= 1 << (i & 63)
		u.in[n] |= 1 << (j & 63)
	} else {
		u.out[o] &^= 1 << (i & 63)
		u.in[n] &^= 1 << (j & 63)
	}
}

// release takes a tentative (wet) turn out of the used-turn graph.
func (u *usedTurns) release(t int32) {
	if u.state[t] == tWet {
		u.state[t] = tUnused
		a := u.ti.from[t]
		g := u.ti.g
		u.setBits(a, g.Off[g.Head[a]]+t-u.ti.base[a], false)
	}
}

// insert adds edge a→b to the order, or reports false when b reaches a over
// used turns. The turn itself must not be marked used yet. When ord[b] <
// ord[a], a depth-first search from b over the channels ordered before a
// looks for a; if it is not found, the channels it reached move behind the
// rest of the window ord[b]..ord[a], each part keeping its order
// (Marchetti-Spaccamela, Nanni, Rohnert, IPL 59, 1996). Pearce–Kelly's
// reordering of just the searched channels needs a backward search too,
// which costs more than this scan (torus 8×8×8, k = 8: 0.32 s against
// 0.22 s per routing).
func (u *usedTurns) insert(a, b int32) bool {
	lb, ub := u.ord[b], u.ord[a]
	if lb > ub {
		return true
	}
	if a == b {
		return false
	}
	g, W := u.ti.g, u.ti.words
	u.stamp++
	st := u.stamp
	// Pushes are branch-free (the outcome of the tests is unpredictable);
	// marking channels ordered after a is harmless.
	C := len(u.ord) + 1
	if cap(u.dF) < C {
		u.dF, u.stack = make([]int32, C), make([]int32, C)
	}
	stack := u.stack[:C]
	stack[0] = b
	u.markF[b] = st
	for sp := 1; sp > 0; {
		sp--
		w := stack[sp]
		off := g.Off[g.Head[w]]
		for k, m := range u.out[int(w)*W : int(w+1)*W] {
			for ; m != 0; m &= m - 1 {
				z := off + int32(k<<6+bits.TrailingZeros64(m))
				if z == a {
					return false
				}
				fresh := b2i(u.markF[z] != st) & b2i(u.ord[z] < ub)
				u.markF[z] = st
				stack[sp] = z
				sp += fresh
			}
		}
	}
	// No used turn leads from a reached channel to an unreached one of the
	// window, so the new order is topological.
	dF := u.dF[:C]
	n, k := 0, lb
	for p := lb; p <= ub; p++ {
		w := u.at[p]
		f := b2i(u.markF[w] == st)
		dF[n] = w
		n += f
		u.at[k], u.ord[w] = w, k
		k += int32(1 - f)
	}
	for _, w := range dF[:n] {
		u.at[k], u.ord[w] = w, k
		k++
	}
	return true
}

// b2i is 1 for true: branch-free counting.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
