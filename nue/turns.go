package nue

import (
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
}

func newTurnIndex(g *fabric.Graph) *turnIndex {
	ti := &turnIndex{g: g, base: make([]int32, g.NumChannels()+1)}
	for c := 0; c < g.NumChannels(); c++ {
		ti.base[c+1] = ti.base[c] + int32(g.Degree(g.Head[c]))
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
// dynamic topological order of the channels over the used turns (Pearce &
// Kelly, "A Dynamic Topological Sort Algorithm for Directed Acyclic
// Graphs", ACM JEA 11, 2006). Adding a used turn a→b costs O(1) when
// ord[a] < ord[b]; otherwise a search bounded to the channels ordered
// between b and a decides whether b reaches a (a cycle) and, if not,
// reorders just those channels. Removing a turn never invalidates the
// order. Not safe for concurrent use.
type usedTurns struct {
	ti    *turnIndex
	state []uint8
	ord   []int32 // channel -> position in the topological order
	at    []int32 // position -> channel

	// search scratch
	markF, markB []uint32
	stamp        uint32
	stack        []int32
	dF, dB, pool []int32

	blocked, used int // counts for statistics
}

func newUsedTurns(ti *turnIndex) *usedTurns {
	C := ti.g.NumChannels()
	u := &usedTurns{
		ti: ti, state: make([]uint8, ti.numTurns()),
		ord: make([]int32, C), at: make([]int32, C),
		markF: make([]uint32, C), markB: make([]uint32, C),
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
		return false
	}
	u.state[t] = st
	return true
}

// release takes a tentative (wet) turn out of the used-turn graph.
func (u *usedTurns) release(t int32) {
	if u.state[t] == tWet {
		u.state[t] = tUnused
	}
}

// insert adds edge a→b to the order, or reports false when b reaches a over
// used turns. The turn itself must not be marked used yet.
func (u *usedTurns) insert(a, b int32) bool {
	lb, ub := u.ord[b], u.ord[a]
	if lb > ub {
		return true
	}
	if a == b {
		return false
	}
	g, ti := u.ti.g, u.ti
	u.stamp++
	st := u.stamp
	// Forward from b over channels ordered before a.
	u.dF = u.dF[:0]
	u.stack = append(u.stack[:0], b)
	u.markF[b] = st
	for len(u.stack) > 0 {
		w := u.stack[len(u.stack)-1]
		u.stack = u.stack[:len(u.stack)-1]
		u.dF = append(u.dF, w)
		h := g.Head[w]
		base, off := ti.base[w], g.Off[h]
		for z := off; z < g.Off[h+1]; z++ {
			if u.state[base+z-off] < tEscape {
				continue
			}
			if z == a {
				return false
			}
			if u.markF[z] != st && u.ord[z] < ub {
				u.markF[z] = st
				u.stack = append(u.stack, z)
			}
		}
	}
	// Backward from a over channels ordered after b.
	u.dB = u.dB[:0]
	u.stack = append(u.stack[:0], a)
	u.markB[a] = st
	for len(u.stack) > 0 {
		w := u.stack[len(u.stack)-1]
		u.stack = u.stack[:len(u.stack)-1]
		u.dB = append(u.dB, w)
		tl := g.Tail[w]
		for c := g.Off[tl]; c < g.Off[tl+1]; c++ {
			z := g.Rev[c] // enters tl
			if u.state[ti.id(z, w)] < tEscape {
				continue
			}
			if u.markB[z] != st && u.ord[z] > lb {
				u.markB[z] = st
				u.stack = append(u.stack, z)
			}
		}
	}
	// Reorder: the backward set takes the lowest of the freed positions.
	// Both sets are needed in their current order: scan the window when
	// it is small, else sort.
	n := len(u.dB) + len(u.dF)
	if int(ub-lb) <= 8*n {
		u.dB, u.dF = u.dB[:0], u.dF[:0]
		for p := lb; p <= ub; p++ {
			w := u.at[p]
			if u.markB[w] == st {
				u.dB = append(u.dB, w)
			} else if u.markF[w] == st {
				u.dF = append(u.dF, w)
			}
		}
	} else {
		byOrd := func(x, y int32) int { return int(u.ord[x] - u.ord[y]) }
		slices.SortFunc(u.dB, byOrd)
		slices.SortFunc(u.dF, byOrd)
	}
	u.pool = u.pool[:0]
	i, j := 0, 0
	for i < len(u.dB) || j < len(u.dF) {
		if j == len(u.dF) || (i < len(u.dB) && u.ord[u.dB[i]] < u.ord[u.dF[j]]) {
			u.pool = append(u.pool, u.ord[u.dB[i]])
			i++
		} else {
			u.pool = append(u.pool, u.ord[u.dF[j]])
			j++
		}
	}
	k := 0
	for _, w := range u.dB {
		u.ord[w] = u.pool[k]
		u.at[u.pool[k]] = w
		k++
	}
	for _, w := range u.dF {
		u.ord[w] = u.pool[k]
		u.at[u.pool[k]] = w
		k++
	}
	return true
}
