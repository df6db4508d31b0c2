package nue

import (
	"cmp"
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
	// words of the per-channel turn bit masks of usedTurns: enough for
	// the largest switch degree.
	words int
	// hs: by channel, its head switch << 6 | the slot of its reverse at
	// the head (the bit of its turns onward); only when words == 1 and the
	// switches fit 26 bits (the sweep's pull: one load for both).
	hs []uint32
	// parBytes: the level rows' (see levelRow).
	parBytes int
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
	ti.parBytes = parBytes(g)
	if ti.words == 1 && g.NumSwitches() < 1<<26 {
		ti.hs = make([]uint32, g.NumChannels())
		for c := range ti.hs {
			h := g.Head[c]
			ti.hs[c] = uint32(h)<<6 | uint32(g.Rev[c]-g.Off[h])
		}
	}
	return ti
}

// from returns the channel turn t arrives on (a binary search: only
// releases of tentative turns need it).
func (ti *turnIndex) from(t int32) int32 {
	c, _ := slices.BinarySearch(ti.base, t+1) // the first channel whose turns start after t
	return int32(c - 1)
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
//
// The order is a linked list whose labels (ord) increase along it, with
// gaps, so that moving channels costs no shift of the ones in between
// (order maintenance, list labelling: Dietz & Sleator, STOC 1987).
type usedTurns struct {
	ti    *turnIndex
	state []uint8
	// The order as a list, -1 at its ends, made when a move first needs
	// it (see list): a layer whose turns all insert in order (fat trees)
	// never moves a channel. Until then the order is seq.
	next, prev []int32
	head       int32 // first channel of the order
	seq        []int32
	// cb holds, per channel, stride = 1 + 3·ti.words words side by side
	// (the searches read them together: one cache line, not four):
	//   - its label in the order (ord): a before b iff ord(a) < ord(b);
	//   - its used turns as bit masks, so searches visit only used
	//     turns: out (bit i: onto the i-th channel leaving Head[c]) and
	//     in (bit j: from the reverse of the j-th channel leaving
	//     Tail[c]; read by layer.relax and the sweep);
	//   - its blocked turns (blk), laid out like in.
	cb     []uint64
	stride int

	// search scratch, allocated when first needed
	markF, markB          []uint32
	stamp                 uint32
	stack, stackB, dF, dB []int32
	keys                  []ordChan // move's

	blocked, used int // counts for statistics
}

// newUsedTurns returns a layer's CDG with no turn used and the channels
// ordered as in seq (nil: by index).
func newUsedTurns(ti *turnIndex, seq []int32) *usedTurns {
	C := ti.g.NumChannels()
	u := &usedTurns{
		ti: ti, state: make([]uint8, ti.numTurns()),
		cb: make([]uint64, C*(1+3*ti.words)), stride: 1 + 3*ti.words,
	}
	if seq == nil {
		seq = make([]int32, C)
		for c := range seq {
			seq[c] = int32(c)
		}
	}
	u.link(seq)
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
	u.link(seedSeq(u.ti.g, level))
}

// seedSeq is the channel order of seedOrder; the layers share it, as
// their levels are the same.
func seedSeq(g *fabric.Graph, level []int32) []int32 {
	C := g.NumChannels()
	const band = 1 << 20
	// Sorted by key, then channel: keys and channels packed into one
	// integer each (levels are ≥ -1, so keys fit 23 bits).
	keyed := make([]uint64, C)
	for c := range keyed {
		lt, lh := int64(level[g.Tail[c]]), int64(level[g.Head[c]])
		var k int64
		switch {
		case lh > lt: // up
			k = lt
		case lh == lt:
			k = band
		default: // down
			k = 2*band - lt
		}
		keyed[c] = uint64(k+1)<<32 | uint64(c)
	}
	slices.Sort(keyed)
	seq := make([]int32, C)
	for i, x := range keyed {
		seq[i] = int32(uint32(x))
	}
	return seq
}

// labelGap is the initial distance between neighbouring labels; labels
// stay below maxLabel.
const (
	labelGap = int64(1) << 32
	maxLabel = int64(1) << 62
)

// link makes seq (every channel once; kept, not copied) the order, evenly
// labelled.
func (u *usedTurns) link(seq []int32) {
	for i, c := range seq {
		u.setOrd(c, int64(i+1)*labelGap)
	}
	if u.next == nil {
		u.seq = seq
		return
	}
	u.relink(seq)
}

// list makes the order's list, if not made yet.
func (u *usedTurns) list() {
	if u.next != nil {
		return
	}
	C := len(u.seq)
	l := make([]int32, 2*C)
	u.next, u.prev = l[:C:C], l[C:]
	u.relink(u.seq)
	u.seq = nil
}

// relink makes the list follow seq.
func (u *usedTurns) relink(seq []int32) {
	u.head = -1
	prev := int32(-1)
	for _, c := range seq {
		u.prev[c] = prev
		u.next[c] = -1
		if prev >= 0 {
			u.next[prev] = c
		} else {
			u.head = c
		}
		prev = c
	}
}

// ord returns the label of channel c in the order.
func (u *usedTurns) ord(c int32) int64 { return int64(u.cb[int(c)*u.stride]) }

func (u *usedTurns) setOrd(c int32, x int64) { u.cb[int(c)*u.stride] = uint64(x) }

// outMask, inMask and blkMask return channel c's turn masks (see cb).
func (u *usedTurns) outMask(c int32) []uint64 {
	o := int(c)*u.stride + 1
	return u.cb[o : o+u.ti.words]
}

func (u *usedTurns) inMask(c int32) []uint64 {
	o := int(c)*u.stride + 1 + u.ti.words
	return u.cb[o : o+u.ti.words]
}

func (u *usedTurns) blkMask(c int32) []uint64 {
	o := int(c)*u.stride + 1 + 2*u.ti.words
	return u.cb[o : o+u.ti.words]
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
		u.blkMask(b)[j>>6] |= 1 << (j & 63)
		return false
	}
	u.state[t] = st
	u.setBits(a, b, true)
	return true
}

// setBits sets or clears the mask bits of turn a→b.
func (u *usedTurns) setBits(a, b int32, on bool) {
	g := u.ti.g
	i := int(b - g.Off[g.Head[a]])
	j := int(g.Rev[a] - g.Off[g.Tail[b]])
	o, n := &u.outMask(a)[i>>6], &u.inMask(b)[j>>6]
	if on {
		*o |= 1 << (i & 63)
		*n |= 1 << (j & 63)
	} else {
		*o &^= 1 << (i & 63)
		*n &^= 1 << (j & 63)
	}
}

// release takes a tentative (wet) turn out of the used-turn graph.
func (u *usedTurns) release(t int32) {
	if u.state[t] == tWet {
		u.state[t] = tUnused
		a := u.ti.from(t)
		g := u.ti.g
		u.setBits(a, g.Off[g.Head[a]]+t-u.ti.base[a], false)
	}
}

// insert adds edge a→b to the order, or reports false when b reaches a over
// used turns. The turn itself must not be marked used yet. When ord[b] <
// ord[a], a depth-first search from b over the channels ordered before a
// looks for a; once it has visited twoWayAfter channels, a search backward
// from a over the channels ordered after b takes turns with it, and the
// two meeting is a cycle. If the forward search runs out, the channels it
// reached move right behind a; if the backward one does, the channels it
// reached move right in front of b; either part keeps its order
// (Marchetti-Spaccamela, Nanni, Rohnert, IPL 59, 1996, and its mirror
// image). The moved channels are relabelled in the gap there (see
// placeAfter); the rest of the window ord[b]..ord[a] keeps its labels, so
// a move costs the reached channels, not the window (windows are large and
// the reached part small; plain positions would shift the whole window).
// Pearce–Kelly's reordering of both searched sets needs a backward search
// every time and is slower here (nue/README.md, "Search", has the
// measurements).
func (u *usedTurns) insert(a, b int32) bool {
	lb, ub := u.ord(b), u.ord(a)
	if lb > ub {
		return true
	}
	if a == b {
		return false
	}
	g := u.ti.g
	st := u.newSearch()
	C := len(u.markF) + 1
	stackF, stackB, dF, dB := u.stack[:C], u.stackB[:C], u.dF[:C], u.dB[:C]
	stackF[0], stackB[0] = b, a
	u.markF[b], u.markB[a] = st, st
	spF, spB, nF, nB := 1, 1, 0, 0
	for {
		// One channel forward from b, over the channels before a...
		if spF == 0 {
			u.move(a, b, dF[:nF], u.markF, st, true)
			return true
		}
		spF--
		w := stackF[spF]
		dF[nF] = w
		nF++
		off := g.Off[g.Head[w]]
		for k, m := range u.outMask(w) {
			for ; m != 0; m &= m - 1 {
				z := off + int32(k<<6+bits.TrailingZeros64(m))
				if z == a || (nB > 0 && u.markB[z] == st) { // z reaches a
					return false
				}
				// Branch-free push (the outcome is unpredictable);
				// marking channels ordered after a is harmless.
				fresh := b2i(u.markF[z] != st) & b2i(u.ord(z) < ub)
				u.markF[z] = st
				stackF[spF] = z
				spF += fresh
			}
		}
		// ... and, once the forward search is no longer small, one
		// backward from a, over the channels after b.
		if nF <= twoWayAfter {
			continue
		}
		if spB == 0 {
			u.move(a, b, dB[:nB], u.markB, st, false)
			return true
		}
		spB--
		x := stackB[spB]
		dB[nB] = x
		nB++
		off = g.Off[g.Tail[x]]
		for k, m := range u.inMask(x) {
			for ; m != 0; m &= m - 1 {
				p := g.Rev[off+int32(k<<6+bits.TrailingZeros64(m))]
				if u.markF[p] == st { // b reaches p (or p is b)
					return false
				}
				if u.markB[p] != st && u.ord(p) > lb {
					u.markB[p] = st
					stackB[spB] = p
					spB++
				}
			}
		}
	}
}

// newSearch readies the scratch of insert's two searches and returns the
// stamp that marks this search's channels: marks and stacks are allocated
// at the first search (a layer whose turns all insert in order, as on fat
// trees, never searches), and a new stamp spares clearing the marks.
func (u *usedTurns) newSearch() uint32 {
	if u.markF == nil {
		C := len(u.cb) / u.stride
		u.markF, u.markB = make([]uint32, C), make([]uint32, C)
	}
	u.stamp++
	if u.stamp == 0 { // wrapped: old marks could pass for new ones
		clear(u.markF)
		clear(u.markB)
		u.stamp = 1
	}
	// A stack holds every channel at most once, and one slot more for
	// the forward search's branch-free push, which writes before it counts.
	if C := len(u.markF) + 1; cap(u.dF) < C {
		u.dF, u.dB, u.stack, u.stackB = make([]int32, C), make([]int32, C), make([]int32, C), make([]int32, C)
	}
	return u.stamp
}

// twoWayAfter is how many channels the forward search of insert visits
// alone before the backward search joins it. Most insertions reach only a
// few channels and succeed, where a second search is wasted; refused turns
// make the forward search run until it meets the cycle, which the backward
// search cuts short (figures: bench/nue/NOTES.md).
const twoWayAfter = 32

// move finishes an insertion a→b once one of its searches ran out. The
// channels that search reached (marked st, all in the window from b to a)
// move in their order: behind a if it was the forward search (what b
// reaches), in front of b if it was the backward one (what reaches a). No
// used turn leads out of the forward set, or into the backward set, from
// the rest of the window, so the order stays topological. They are put in
// order by sorting when they are few (maxSortedMove), else by walking the
// window.
func (u *usedTurns) move(a, b int32, reached []int32, mark []uint32, st uint32, behindA bool) {
	u.list()
	if len(reached) <= maxSortedMove {
		ks := u.keys[:0]
		for _, x := range reached {
			ks = append(ks, ordChan{u.ord(x), x})
		}
		slices.SortFunc(ks, func(p, q ordChan) int { return cmp.Compare(p.ord, q.ord) })
		for i, k := range ks {
			reached[i] = k.c
		}
		u.keys = ks
	} else {
		n := 0
		for x := b; ; x = u.next[x] {
			if mark[x] == st {
				reached[n] = x
				n++
			}
			if x == a {
				break
			}
		}
	}
	for _, x := range reached {
		u.unlink(x)
	}
	if behindA {
		u.placeAfter(a, reached)
	} else {
		u.placeAfter(u.prev[b], reached)
	}
}

// maxSortedMove is how many reached channels move sorts at most; more are
// collected by walking the window, which is longer than that by far
// (figures: bench/nue/NOTES.md).
const maxSortedMove = 256

// ordChan is a channel with its label, for sorting.
type ordChan struct {
	ord int64
	c   int32
}

// unlink takes channel x out of the order list.
func (u *usedTurns) unlink(x int32) {
	p, q := u.prev[x], u.next[x]
	if p >= 0 {
		u.next[p] = q
	} else {
		u.head = q
	}
	if q >= 0 {
		u.prev[q] = p
	}
}

// placeAfter links the channels xs (unlinked) right behind a, in order,
// and labels them. Where the gap behind a is too small, the channels that
// follow a are relabelled along with xs, as many as needed for a gap of at
// least minGap each; if even the end of the list leaves too little room,
// the whole list is relabelled evenly first.
func (u *usedTurns) placeAfter(a int32, xs []int32) {
	const minGap = 1 << 12
	for {
		lo, end := int64(0), u.head // a < 0: the front of the list
		if a >= 0 {
			lo, end = u.ord(a), u.next[a]
		}
		m := 0 // channels from end on that are relabelled too
		for {
			n := int64(m + len(xs) + 1)
			hi := maxLabel
			if end >= 0 {
				hi = u.ord(end)
			} else if (maxLabel-lo)/labelGap > n {
				hi = lo + n*labelGap
			}
			if (hi-lo)/n >= minGap {
				u.spread(a, xs, m, lo, (hi-lo)/n)
				return
			}
			if end < 0 {
				break
			}
			end = u.next[end]
			m++
		}
		var seq []int32
		for c := u.head; c >= 0; c = u.next[c] {
			seq = append(seq, c)
		}
		u.link(seq)
	}
}

// spread links xs behind a (at the front when a < 0), followed by the m
// channels that followed a, labelled lo+step, lo+2·step, …
func (u *usedTurns) spread(a int32, xs []int32, m int, lo, step int64) {
	rest := u.head
	if a >= 0 {
		rest = u.next[a]
	}
	prev := a
	link := func(x int32) {
		u.prev[x] = prev
		if prev >= 0 {
			u.next[prev] = x
		} else {
			u.head = x
		}
		prev = x
	}
	k := int64(1)
	for _, x := range xs {
		u.setOrd(x, lo+k*step)
		link(x)
		k++
	}
	for i := 0; i < m; i++ {
		next := u.next[rest]
		u.setOrd(rest, lo+k*step)
		link(rest)
		rest = next
		k++
	}
	if prev >= 0 {
		u.next[prev] = rest
	} else {
		u.head = rest
	}
	if rest >= 0 {
		u.prev[rest] = prev
	}
}

// b2i is 1 for true: branch-free counting.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
