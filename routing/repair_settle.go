package routing

import (
	"fmt"
	"math/bits"

	"github.com/nuesm/nuesm/lft"
)

// repairDest re-routes the switches of one destination whose paths broke
// and returns how many entries it changed.
//
// The switches with intact paths are settled and keep their entries. The
// broken ones are settled one at a time, as in Dijkstra's algorithm from
// the settled set: a candidate is a channel from a broken switch w to a
// settled switch v, keyed by the hops w would have to the destination
// (ties: w's own entry first, then channel order). The candidate popped
// first is taken when the dependencies it adds keep the CDG of every VL
// acyclic: w's own terminal traffic now turns from the channel into v's
// onward channel, and travels v's path in VLs that path may not have
// carried before (Nue's layered acyclicity argument, Domke et al., HPDC
// 2016, §4, restricted to one destination's tree: a switch is only
// attached to switches already settled, so no loop forms, and a later
// switch that routes through w checks its own turns into w's channel
// then). A switch whose own traffic is nil (no terminals, nothing routed
// through it yet) adds no dependency and always attaches; a switch that
// routes through it later pushes its traffic down that path under the
// same check.
//
// First only the break points may change (keep mode, keepBreaks): every
// other broken switch keeps its entry and reaches the destination through
// a break point's new path, when that closes no cycle and adds at most
// keepSlack hops to the shortest path. Such a repair moves live in one
// ordered write: a packet follows its old path until a break point and
// its new path from there, so every transitional path is a new one and
// the update plan needs neither transition SLs nor a second round. Where
// other switches change too, a switch may still forward into a switch
// already rewritten along its old entry, a turn neither routing has.
//
// Shortest repaired paths can change many entries: when every neighbour
// of a break point routes through it, each finds its own way around
// first. When the shortest repair changes more than twice the break
// points' entries, the destination is repaired again with as few changes
// as it can (detours, below) and the repair with fewer changes is kept.
//
// When neither finds a way and SLs are per destination, the destination
// moves to another VL the routing uses: its whole tree is re-attached
// there (keeping entries where it can), since none of its turns are in
// that VL's CDG yet.
//
// Cost: O(switches) to classify and measure the tree, plus O(b log b)
// heap work and one Pearce–Kelly insertion per new turn for the b broken
// switches, once in keep mode (plus once per channel of a lone break
// point when that fails, and an O(switches) breadth-first search), then at
// most three times.
func (rp *repairer) repairDest(bd *brokenDest) (int, error) {
	m := rp.ly.mark()
	cur := rp.r.SL.ByDest[bd.d]
	if !bd.freshDest {
		if keep := (settleMode{keep: true, sl: cur}); rp.keepBreaks(bd, keep) {
			return rp.apply(bd, keep), nil
		}
	}
	short := settleMode{sl: cur}
	n, err := rp.settle(bd, short)
	if err == nil && n <= 2*bd.breaks {
		return rp.apply(bd, short), nil
	}
	rp.ly.rollback(m)
	fewest := settleMode{fewest: true, sl: cur}
	n2, err2 := rp.settle(bd, fewest)
	if err2 == nil && (err != nil || n2 < n) {
		return rp.apply(bd, fewest), nil
	}
	rp.ly.rollback(m)
	if err == nil {
		if _, err := rp.settle(bd, short); err != nil {
			return 0, err // not reached: settle is deterministic
		}
		return rp.apply(bd, short), nil
	}
	if bd.src != nil {
		return 0, err
	}
	// Per-destination SLs: the whole tree may move to another VL the
	// routing uses, where its turns are all new.
	for vl, sl := range rp.slOf[:rp.vls] {
		if sl == noSL || uint8(vl) == rp.r.SL2VL.Default[cur&0xF] {
			continue
		}
		move := settleMode{fewest: true, whole: true, sl: sl}
		if _, err := rp.settle(bd, move); err == nil {
			return rp.apply(bd, move), nil
		}
		rp.ly.rollback(m)
	}
	return 0, err
}

// settleMode says how settle re-attaches a destination's switches.
type settleMode struct {
	// keep: only the break points change their entries; every other
	// broken switch keeps its own (and its SL) and so reaches the
	// destination through a break point's new path.
	keep bool
	// forced (with keep): the break point takes channel via.
	forced bool
	via    int32
	// fewest: the break points first take detours through the broken
	// switches (detours), and a switch keeps its own entry unless
	// another one is more than keepSlack hops shorter.
	fewest bool
	// whole re-attaches every switch (of d's component), not only the
	// broken ones: the destination moves to another VL.
	whole bool
	sl    uint8 // the destination's SL (per-destination SLs)
}

// settle re-attaches d's broken switches as mode says (leaving the result
// in rp.col and rp.src) and returns the entries it changed.
func (rp *repairer) settle(bd *brokenDest, mode settleMode) (int, error) {
	g, t := rp.g, rp.tree
	col := rp.col
	copy(col, bd.col)
	if bd.state != nil {
		t.reload(bd, col)
	} else {
		t.load(bd.d, col)
	}
	if mode.whole && !t.whole {
		for x := range t.state {
			if t.state[x] == stOK && int32(x) != t.dsw {
				t.state[x] = stBroken
			}
		}
	}
	rp.src = nil
	if bd.src != nil {
		rp.src = rp.srcBuf
		copy(rp.src, bd.src)
		t.ownPerSource(bd.src, &rp.r.SL2VL.Default)
	} else {
		t.ownPerDest(rp.r.SL2VL.Default[mode.sl&0xF])
	}
	t.spread()
	rp.clearDist()
	rp.slack, rp.keep, rp.via = 0, mode.keep, -1
	if mode.keep && mode.forced {
		rp.via = mode.via
	}
	if mode.fewest {
		rp.slack = keepSlack
		rp.detours()
	}
	rp.heap = rp.heap[:0]
	for w := int32(0); int(w) < g.NumSwitches(); w++ {
		if t.state[w] == stBroken {
			rp.offer(w)
		}
	}
	for len(rp.heap) > 0 {
		c := int32(rp.pop() & 0xFFFFFFFF)
		if w := g.Tail[c]; t.state[w] == stBroken && rp.attach(w, c) {
			rp.settled(w, c)
		}
	}
	if w := rp.stuck(); w >= 0 && t.own[w] != 0 {
		return 0, fmt.Errorf("%w: LID %d: switch %s has no path that keeps the dependencies of VL %d acyclic",
			ErrNoRepair, bd.d, g.SwitchName(w), bits.TrailingZeros16(t.own[w]))
	} else if w >= 0 {
		return 0, fmt.Errorf("%w: LID %d: switch %s has no neighbour with a path left", ErrNoRepair, bd.d, g.SwitchName(w))
	}
	n := 0
	for x, p := range col {
		if p != bd.col[x] {
			n++
		}
	}
	return n, nil
}

// keepSlack is how many hops longer than the shortest repaired path a
// switch's own entry may lead when changes are to be few.
const keepSlack = 2

// settled records that broken switch w now routes through channel c and
// queues its broken neighbours' channels into w.
func (rp *repairer) settled(w, c int32) {
	g, t := rp.g, rp.tree
	t.state[w], t.nxt[w], rp.dist[w] = stOK, c, rp.hopsOf(g.Head[c])+1
	rp.col[w] = g.OutPort[c]
	for e := g.Off[w]; e < g.Off[w+1]; e++ {
		if x := g.Head[e]; t.state[x] == stBroken {
			rp.push(x, g.Rev[e])
		}
	}
}

// apply writes the settled column (and SLs) into the routing, commits the
// turns, and returns the entries changed.
func (rp *repairer) apply(bd *brokenDest, mode settleMode) int {
	n := 0
	for x, p := range rp.col {
		if p != bd.col[x] {
			rp.r.SetPort(int32(x), bd.d, p)
			n++
		}
	}
	for x, sl := range rp.src {
		if sl != bd.src[x] {
			rp.r.SL.SrcRow(int32(x))[bd.d] = sl
			rp.slChanged++
		}
	}
	if bd.src == nil && mode.sl != rp.r.SL.ByDest[bd.d] {
		rp.r.SL.ByDest[bd.d] = mode.sl
		rp.slChanged++
	}
	rp.ly.commit()
	return n
}

// keepBreaks settles bd in keep mode (only break points change) and
// reports whether that works with paths that stay short (keepsShort):
// first with the break points' channels chosen as in settle; then, when
// there is one break point, through each of its channels in turn,
// nearest to the destination first, since the nearest one may close a
// cycle only with the turns of the switches upstream. The result is left
// in rp.col for apply.
func (rp *repairer) keepBreaks(bd *brokenDest, mode settleMode) bool {
	g := rp.g
	m := rp.ly.mark()
	if _, err := rp.settle(bd, mode); err == nil && rp.keepsShort(bd) {
		return true
	}
	rp.ly.rollback(m)
	b := rp.breakPoint(bd)
	if b < 0 {
		return false
	}
	if len(rp.bfs) == 0 {
		rp.bfs = make([]int32, g.NumSwitches())
	}
	g.BFS(rp.tree.dsw, rp.bfs, nil)
	rp.vias = rp.vias[:0]
	for c := g.Off[b]; c < g.Off[b+1]; c++ {
		if h := rp.bfs[g.Head[c]]; h >= 0 && h+1 <= rp.bfs[b]+keepSlack {
			rp.vias = append(rp.vias, uint64(h)<<32|uint64(uint32(c)))
		}
	}
	sortKeys(rp.vias)
	mode.forced = true
	for _, k := range rp.vias {
		mode.via = int32(k & 0xFFFFFFFF)
		if _, err := rp.settle(bd, mode); err == nil && rp.keepsShort(bd) {
			return true
		}
		rp.ly.rollback(m)
	}
	return false
}

// breakPoint returns the only break point (a switch whose entry leads
// into a failed cable or switch) of bd, whose tree settle has loaded, or
// -1 when it has none or several.
func (rp *repairer) breakPoint(bd *brokenDest) int32 {
	g, t, b := rp.g, rp.tree, int32(-1)
	for x, p := range bd.col {
		if p == lft.NoPort || int32(x) == t.dsw || rp.comp[x] != rp.comp[t.dsw] || g.ChannelAt(int32(x), p) >= 0 {
			continue
		}
		if b >= 0 {
			return -1
		}
		b = int32(x)
	}
	return b
}

// keepsShort reports whether the break points of bd, just settled in
// keep mode, reach the destination in at most keepSlack hops more than
// the shortest path in the fabric: the switches upstream of a break point
// then take at most that many hops more than before.
func (rp *repairer) keepsShort(bd *brokenDest) bool {
	for x, p := range rp.col {
		if p != bd.col[x] {
			if h := rp.hopsOf(int32(x)) - keepSlack - 1; h > 0 && rp.near(int32(x), rp.tree.dsw, h) {
				return false
			}
		}
	}
	return true
}

// near reports whether switch y is at most depth hops from switch x
// (a breadth-first search from x that stops at that depth).
func (rp *repairer) near(x, y int32, depth int32) bool {
	g := rp.g
	if len(rp.seen) == 0 {
		rp.seen = make([]uint32, g.NumSwitches())
	}
	rp.stamp++
	if rp.stamp == 0 {
		clear(rp.seen)
		rp.stamp = 1
	}
	level := append(rp.queue[:0], x)
	rp.seen[x] = rp.stamp
	for d := int32(0); d < depth && len(level) > 0; d++ {
		n := len(level)
		for _, u := range level[:n] {
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if v := g.Head[c]; rp.seen[v] != rp.stamp {
					if v == y {
						return true
					}
					rp.seen[v] = rp.stamp
					level = append(level, v)
				}
			}
		}
		level = level[n:]
	}
	return false
}

// stuck returns a switch left broken, one with terminals if any, or -1.
func (rp *repairer) stuck() int32 {
	t := rp.tree
	first := int32(-1)
	for w := int32(0); int(w) < len(t.state); w++ {
		if t.state[w] != stBroken {
			continue
		}
		if t.own[w] != 0 {
			return w
		}
		if first < 0 {
			first = w
		}
	}
	return first
}

// attach tries to route broken switch w through channel c: it adds the
// turns of w's own traffic into c and on along the path of c's head, and
// takes them back when one closes a cycle. When SLs are chosen per
// source, w's traffic may move to another VL the routing uses (its SL to
// the first SL that maps there) when its own VL does not take the path.
func (rp *repairer) attach(w, c int32) bool {
	t := rp.tree
	own := t.own[w]
	if own == 0 {
		return true
	}
	t.nxt[w] = c
	if rp.turnsFit(w, own) {
		t.push(w, own)
		return true
	}
	if rp.src == nil || rp.keep {
		return false
	}
	for vl := 0; vl < rp.vls; vl++ {
		if sl := rp.slOf[vl]; 1<<vl != own && sl != noSL && rp.turnsFit(w, 1<<vl) {
			t.own[w] = 1 << vl
			rp.src[w] = sl
			t.push(w, t.own[w])
			return true
		}
	}
	return false
}

// turnsFit adds the turns that traffic on the VLs own from w takes along
// w's path until it meets traffic on those VLs already, or takes them
// all back and reports false when one closes a cycle.
func (rp *repairer) turnsFit(w int32, own uint16) bool {
	g, t, ly := rp.g, rp.tree, rp.ly
	m := ly.mark()
	for x, nb := w, own; nb != 0; nb &^= t.mask[x] {
		y := g.Head[t.nxt[x]]
		if y == t.dsw {
			break
		}
		for vl := uint8(0); nb>>vl != 0; vl++ {
			if nb>>vl&1 != 0 && !ly.try(vl, t.nxt[x], t.nxt[y]) {
				ly.rollback(m)
				return false
			}
		}
		x = y
	}
	return true
}

// distances sets dist to every settled switch's hops to the destination
// along the tables (-1 for the others).
func (rp *repairer) distances() {
	rp.clearDist()
	for x := int32(0); int(x) < len(rp.dist); x++ {
		if rp.tree.state[x] == stOK {
			rp.hopsOf(x)
		}
	}
}

// clearDist forgets every switch's hops but the destination's (0), for
// hops to find them as the repair asks.
func (rp *repairer) clearDist() {
	for x := range rp.dist {
		rp.dist[x] = -1
	}
	rp.dist[rp.tree.dsw] = 0
}

// hopsOf returns settled switch x's hops to the destination along the
// tables, from dist or by following x's path until a switch whose hops
// are known (every switch on it is settled), noting them on the way. A
// repair asks for those of the few switches next to broken ones, so it
// does not measure the whole tree.
func (rp *repairer) hopsOf(x int32) int32 {
	if d := rp.dist[x]; d >= 0 {
		return d
	}
	g, t := rp.g, rp.tree
	path := t.path[:0]
	y := x
	for rp.dist[y] < 0 {
		path = append(path, y)
		y = g.Head[t.nxt[y]]
	}
	for i := len(path) - 1; i >= 0; i-- {
		rp.dist[path[i]] = rp.dist[y] + int32(len(path)-i)
	}
	t.path = path
	return rp.dist[x]
}

// offer queues broken switch w's channels to settled neighbours.
func (rp *repairer) offer(w int32) {
	g, t := rp.g, rp.tree
	for c := g.Off[w]; c < g.Off[w+1]; c++ {
		if t.state[g.Head[c]] == stOK {
			rp.push(w, c)
		}
	}
}

// push queues channel c of broken switch w, keyed by the hops w would have
// through it (plus the slack unless c is w's own entry), then whether it
// is w's own entry (first), then c.
func (rp *repairer) push(w, c int32) {
	g := rp.g
	own := rp.col[w] // w is not settled yet: its entry is the old one
	if rp.keep && own != g.OutPort[c] && g.ChannelAt(w, own) >= 0 {
		return // w is no break point and keeps its entry
	}
	if rp.keep && rp.via >= 0 && g.ChannelAt(w, own) < 0 && c != rp.via {
		return // the break point's channel is given
	}
	var pref uint64 = 1
	hops := uint64(rp.hopsOf(g.Head[c]) + 1)
	if rp.tree.col[w] == g.OutPort[c] {
		pref = 0
	} else {
		hops += uint64(rp.slack)
	}
	key := hops<<33 | pref<<32 | uint64(uint32(c))
	h := append(rp.heap, key)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	rp.heap = h
}

// pop removes and returns the smallest key.
func (rp *repairer) pop() uint64 {
	h := rp.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l] < h[m] {
			m = l
		}
		if l+1 < n && h[l+1] < h[m] {
			m = l + 1
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	rp.heap = h
	return top
}
