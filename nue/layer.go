package nue

import (
	"math"
	"math/bits"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// LayerStats describe one virtual layer of a Nue run.
type LayerStats struct {
	Layer         int    // index = SL = VL
	Root          string // root switch of the escape paths (first component)
	Destinations  int    // LIDs routed in the layer
	Searches      int    // searches run: LIDs sharing one count once (share=switch)
	Sweeps        int    // of which done by the sweep (sweep.go) rather than the Dijkstra
	Fallbacks     int    // destinations routed on the escape paths
	TermFallbacks int    // of which CA or router LIDs
	Backtracks    int    // successful local backtracking steps
	EscapeTurns   int    // turns of the escape paths
	UsedTurns     int    // turns in use at the end (escape paths included)
	BlockedTurns  int    // turns refused because they would close a cycle
	// FilledHops counts LFT entries of switches no terminal's path passes
	// (not reached by the search), set to a shortest-path next hop.
	FilledHops int
}

// incEntry is a channel weight increment produced by one destination.
type incEntry struct {
	c int32
	v int64
}

// layer is one virtual layer: its destinations, its complete CDG and the
// scratch of its per-destination searches. Owned by one goroutine at a time.
type layer struct {
	idx     int
	g       *fabric.Graph
	ti      *turnIndex
	comp    []int32
	own     []int64   // terminal ports per switch (sources of paths)
	jobOwn  [][]int64 // SAR: per job, its terminal ports per switch
	src     []bool    // switches with terminals: where packets enter
	compSrc []int32   // per component label: its source switches
	dests   []dest
	ut      *usedTurns
	parent  []int32 // escape tree
	// escapeAll: the escape paths cover the switch LIDs too (conservative
	// mode); otherwise only the terminal LIDs' switches.
	escapeAll bool

	nh        *nodeHeap
	rh        *radixHeap // the searches' queue when keys fit it, else nh
	dist      []int64
	via       []int32 // switch -> channel towards the destination, -1 none
	settled   []bool
	usedOffer []bool // the current offer to a switch continues on a used turn
	wet       []int32
	indeg     []int32
	load      []int64
	queue     []int32
	cands     []int32
	bfs       []int32
	bfsq      []int32
	inc       []incEntry
	members   []member // scratch of write
	stats     LayerStats

	// The sweep (sweep.go): w0 is the initial channel weight and span
	// the most load any channel carries, as of the current step.
	w0, span           int64
	rows               *levelRows // shared; nil: build ownRow as needed
	ownRow             levelRow
	ownRowOf           int32
	lvl                []int32      // scratch of buildRow
	near               []nearSwitch // scratch of the sweep
	sweeps, sweepFails int
}

// noSweep turns the sweep off (tests compare it with the Dijkstra).
var noSweep = false

const inf = int64(math.MaxInt64 / 4)

func newLayer(idx int, g *fabric.Graph, ti *turnIndex, comp, compSrc []int32, own []int64, src []bool, ds []dest) *layer {
	S := g.NumSwitches()
	return &layer{
		idx: idx, g: g, ti: ti, comp: comp, compSrc: compSrc, own: own, src: src, dests: ds,
		ut: newUsedTurns(ti), nh: newNodeHeap(S),
		dist: make([]int64, S), via: make([]int32, S), settled: make([]bool, S), usedOffer: make([]bool, S),
		indeg: make([]int32, S), load: make([]int64, S), queue: make([]int32, 0, S),
		lvl: make([]int32, S), near: make([]nearSwitch, S),
		stats: LayerStats{Layer: idx, Destinations: len(ds)},
	}
}

// qpush, qpop and qreset use the search's queue.
func (l *layer) qpush(v int32, k int64) {
	if l.rh != nil {
		l.rh.push(v, k)
	} else {
		l.nh.push(v, k)
	}
}

func (l *layer) qpop() (int32, bool) {
	if l.rh != nil {
		return l.rh.pop()
	}
	return l.nh.pop()
}

func (l *layer) qreset() {
	if l.rh != nil {
		l.rh.reset()
	} else {
		l.nh.reset()
	}
}

// route computes the paths of every switch towards destination d under the
// channel weights w (read-only), leaves them in l.via (see write) and the
// weight increments in l.inc (Algorithm 4.1, lines 8–10). It reports false when d
// is a switch LID whose escape routes were not marked in advance and cannot
// be added without a cycle (the caller then reroutes conservatively).
func (l *layer) route(d dest, w []int64) bool {
	l.stats.Searches++
	l.resetSearch()
	fb := l.stats.Fallbacks
	swept, resume, reached := l.trySweep(d.sw, w)
	if !swept {
		if resume == nil {
			// Nothing to take over: afresh.
			for _, t := range l.wet {
				l.ut.release(t)
			}
			l.resetSearch()
			l.dist[d.sw] = 0
			l.qpush(d.sw, 0)
			reached = 0
		} else {
			for _, v := range resume {
				if l.via[v] >= 0 {
					l.qpush(v, l.dist[v])
				}
			}
		}
		if !l.dijkstra(d, w, reached) {
			return false
		}
	}
	for _, t := range l.wet {
		if l.ut.state[t] == tWet {
			l.ut.state[t] = tUsed
			l.ut.used++
		}
	}
	for v := range l.via {
		if !l.settled[v] && int32(v) != d.sw && l.stats.Fallbacks == fb {
			l.via[v] = -1 // a tentative offer, not a route
		}
	}
	l.fillUnreached(d.sw)
	mult := int64(0)
	if d.term {
		mult++
	}
	for _, m := range d.also {
		if m.term {
			mult++
		}
	}
	if d.phase < 2 && mult > 0 { // terminal LIDs; switch LIDs carry next to no data
		src := l.own
		if l.jobOwn != nil && d.job >= 0 {
			src = l.jobOwn[d.job]
		}
		if swept {
			l.incrementsByLevel(l.row(d.sw), src, mult)
		} else {
			l.increments(d.sw, src, mult)
		}
	}
	return true
}

// dijkstra is the search of route (Algorithm 4.1, line 8): a Dijkstra
// over the switches from d.sw whose settling checks the new turn (accept),
// with local backtracking and the escape paths when it stalls. The queue
// holds its start: d.sw, or the level a sweep stopped in, with the sources
// settled before it counted in reached. It reports false as route does.
func (l *layer) dijkstra(d dest, w []int64, reached int32) bool {
	g := l.g
	// Done once every source switch (one with terminals) of the
	// component is reached; the deadlock-freedom guarantee covers the
	// packets terminals inject.
	target := l.compSrc[l.comp[d.sw]]
	for {
		for {
			u, ok := l.qpop()
			if !ok {
				break
			}
			if !l.accept(u, d.sw, w) {
				continue
			}
			l.settled[u] = true
			if l.src[u] {
				reached++
			}
			if reached == target {
				// Every source is settled; switches settled later
				// would carry no source's packets.
				break
			}
			l.relax(u, w)
		}
		if reached == target {
			break
		}
		x := l.backtrack(d.sw, w)
		if x < 0 {
			// Impasse: the escape paths route this destination; their
			// turns are used already, so nothing new enters the CDG.
			for _, t := range l.wet {
				l.ut.release(t)
			}
			l.wet = l.wet[:0]
			escapeRoutes(g, l.parent, l.comp, d.sw, l.via)
			if !d.term && !l.escapeAll {
				var ok bool
				if l.wet, ok = useEscapeRoutes(g, l.ut, l.via, l.src, d.sw, l.wet); !ok {
					return false
				}
			}
			l.stats.Fallbacks++
			if d.term {
				l.stats.TermFallbacks++
			}
			break
		}
		l.qpush(x, l.dist[x])
	}
	return true
}

// resetSearch clears the scratch of one search.
func (l *layer) resetSearch() {
	for v := range l.dist {
		l.dist[v], l.via[v], l.settled[v], l.usedOffer[v] = inf, -1, false, false
	}
	l.wet = l.wet[:0]
	l.qreset()
}

// write puts the paths of the last route towards d (l.via) into r, for d
// and the LIDs sharing its search. It runs after a step's searches, on one
// goroutine: searches side by side would write into the same cache lines
// of the tables (neighbouring LIDs).
func (l *layer) write(d dest, r *lft.Routing) {
	g := l.g
	l.members = append(append(l.members[:0], member{d.lid, d.port, d.term}), d.also...)
	for _, m := range l.members {
		for v, c := range l.via {
			if c >= 0 {
				r.SetPort(int32(v), int(m.lid), g.OutPort[c])
			}
		}
		r.SetPort(d.sw, int(m.lid), m.port)
		r.SL.ByDest[m.lid] = uint8(l.idx)
	}
}

// fillUnreached gives every switch of the destination's component that
// the search did not reach (none of them a source) a next hop one step
// closer to the destination in the switch graph. No source's path passes
// such a switch, so the terminals' dependencies do not change; the hops
// strictly approach the destination, so the switches' own packets cannot
// loop.
func (l *layer) fillUnreached(dsw int32) {
	g := l.g
	missing := false
	for v := range l.via {
		if l.via[v] < 0 && int32(v) != dsw && l.comp[v] == l.comp[dsw] {
			missing = true
			break
		}
	}
	if !missing {
		return
	}
	if l.rows != nil { // nil when the sweep is off
		l.fillFromRow(dsw)
		return
	}
	if l.bfs == nil {
		l.bfs, l.bfsq = make([]int32, len(l.via)), make([]int32, len(l.via))
	}
	g.BFS(dsw, l.bfs, l.bfsq)
	for v := int32(0); int(v) < len(l.via); v++ {
		if l.via[v] >= 0 || v == dsw || l.bfs[v] < 0 {
			continue
		}
		for c := g.Off[v]; c < g.Off[v+1]; c++ {
			if l.bfs[g.Head[c]] == l.bfs[v]-1 {
				l.via[v] = c
				break
			}
		}
		l.stats.FilledHops++
	}
}

// fillFromRow is fillUnreached with the destination's level row, which
// marks the channels one step closer. It picks the same channel (the first
// in the switch's order).
func (l *layer) fillFromRow(dsw int32) {
	g := l.g
	row := l.rows.row(dsw, l.lvl)
	for _, v := range row.order[1:] {
		if l.via[v] >= 0 {
			continue
		}
		l.via[v] = g.Off[v] + int32(bits.TrailingZeros64(row.par[v]))
		l.stats.FilledHops++
	}
}

// relax offers every unsettled neighbour v of the settled switch u the
// channel v→u, continuing on u's own channel (Algorithm 4.1, line 8). The
// turn is only proposed here; accept checks it for cycles when v is about
// to be settled, so a search tries each unused turn at most once. Among
// equal offers, one over a used turn wins.
func (l *layer) relax(u int32, w []int64) {
	g, ut := l.g, l.ut
	vu := l.via[u]
	// The turns from u's in-channels onto vu, as bits by the slot of the
	// reverse channel (see usedTurns.in): no per-turn state lookups.
	var inUsed, inBlk []uint64
	if vu >= 0 {
		o := int(vu) * l.ti.words
		inUsed, inBlk = ut.in[o:o+l.ti.words], ut.blk[o:o+l.ti.words]
	}
	du := l.dist[u]
	off, end := g.Off[u], g.Off[u+1]
	if l.ti.words == 1 && !relaxWide {
		// Degree ≤ 64, the usual case: both masks in registers; the
		// destination's own switch (vu < 0) continues on no turn, which
		// counts as used.
		mu, mb := ^uint64(0), uint64(0)
		if vu >= 0 {
			mu, mb = ut.in[vu], ut.blk[vu]
		}
		for cc := off; cc < end; cc++ {
			v := g.Head[cc]
			if l.settled[v] {
				continue
			}
			bit := uint64(1) << uint(cc-off)
			if mb&bit != 0 {
				continue
			}
			c := g.Rev[cc] // v -> u
			nd := du + w[c]
			if nd < l.dist[v] || (nd == l.dist[v] && l.better(c, mu&bit != 0, v, w)) {
				l.via[v], l.dist[v], l.usedOffer[v] = c, nd, mu&bit != 0
				l.qpush(v, nd)
			}
		}
		return
	}
	for cc := off; cc < end; cc++ {
		v := g.Head[cc]
		if l.settled[v] {
			continue
		}
		c := g.Rev[cc] // v -> u
		used := true
		if inUsed != nil {
			j := cc - off
			bit := uint64(1) << (j & 63)
			if inBlk[j>>6]&bit != 0 {
				continue
			}
			used = inUsed[j>>6]&bit != 0
		}
		nd := du + w[c]
		if nd < l.dist[v] || (nd == l.dist[v] && l.better(c, used, v, w)) {
			l.via[v], l.dist[v], l.usedOffer[v] = c, nd, used
			l.qpush(v, nd)
		}
	}
}

// relaxWide makes relax take its general path even for one-word masks
// (tests compare the two).
var relaxWide = false

// better breaks a tie between v's current offer and channel c: a used
// turn first (no new dependency), then the less loaded first hop (fat trees
// are symmetric enough for ties to be common, and this spreads them).
func (l *layer) better(c int32, used bool, v int32, w []int64) bool {
	if used != l.usedOffer[v] {
		return used
	}
	old := l.via[v]
	return old >= 0 && w[c] < w[old]
}

// accept decides whether switch u, popped with its best offer, can be
// settled: its turn onto the next switch's channel must be in use or close
// no cycle. If not, the turn is blocked and u is pushed back with its best
// remaining offer from settled neighbours, if it has one.
func (l *layer) accept(u, dsw int32, w []int64) bool {
	if u == dsw {
		return true
	}
	g, ti, ut := l.g, l.ti, l.ut
	if l.usedOffer[u] {
		// The offer continued on a used turn, and a search never takes
		// a turn out of use while offers are pending.
		return true
	}
	c := l.via[u]
	next := g.Head[c]
	if next == dsw {
		return true
	}
	t := ti.id(c, l.via[next])
	if ut.isUsed(t) {
		return true
	}
	if ut.state[t] != tBlocked && ut.use(c, l.via[next], tWet) {
		l.wet = append(l.wet, t)
		return true
	}
	// Re-offer: the cheapest remaining way into a settled neighbour.
	best, bestD, bestUsed := int32(-1), inf, false
	for c2 := g.Off[u]; c2 < g.Off[u+1]; c2++ {
		x := g.Head[c2]
		if !l.settled[x] {
			continue
		}
		used := true
		if x != dsw {
			t2 := ti.id(c2, l.via[x])
			if ut.state[t2] == tBlocked {
				continue
			}
			used = ut.isUsed(t2)
		}
		nd := l.dist[x] + w[c2]
		if nd < bestD || (nd == bestD && used && !bestUsed) {
			best, bestD, bestUsed = c2, nd, used
		}
	}
	l.via[u], l.dist[u], l.usedOffer[u] = best, bestD, bestUsed
	if best >= 0 {
		l.qpush(u, bestD)
	}
	return false
}

// releaseTurn gives back the tentative turn from channel c onto the
// channel of the switch c leads to.
func (l *layer) releaseTurn(c int32) {
	if next := l.via[l.g.Head[c]]; next >= 0 {
		l.ut.release(l.ti.id(c, next))
	}
}

// backtrack is the local backtracking step: for an unreached switch x with
// a reached neighbour a whose turn onto a's channel is blocked, try to move
// a to another reached neighbour b2 such that every switch already routed
// through a continues on used turns, and the turns a→b2→… and x→a→b2 close
// no cycle. It returns x with its route set, or -1.
func (l *layer) backtrack(dsw int32, w []int64) int32 {
	g, ti, ut := l.g, l.ti, l.ut
	for x := int32(0); int(x) < len(l.via); x++ {
		if l.settled[x] || l.comp[x] != l.comp[dsw] {
			continue
		}
		for c := g.Off[x]; c < g.Off[x+1]; c++ {
			a := g.Head[c]
			if !l.settled[a] || a == dsw {
				continue
			}
			ca := l.via[a]
			l.cands = l.cands[:0]
			for c2 := g.Off[a]; c2 < g.Off[a+1]; c2++ {
				if c2 != ca && l.settled[g.Head[c2]] {
					l.cands = append(l.cands, c2)
				}
			}
			slices.SortFunc(l.cands, func(p, q int32) int {
				dp, dq := l.dist[g.Head[p]]+w[p], l.dist[g.Head[q]]+w[q]
				if dp != dq {
					if dp < dq {
						return -1
					}
					return 1
				}
				return int(p - q)
			})
			for _, c2 := range l.cands {
				if l.tryDetour(x, c, a, c2, w) {
					l.stats.Backtracks++
					return x
				}
			}
		}
	}
	_ = ut
	_ = ti
	return -1
}

// tryDetour moves switch a onto channel c2 and attaches x through c, if
// the turns allow it (see backtrack).
func (l *layer) tryDetour(x, c, a, c2 int32, w []int64) bool {
	g, ti, ut := l.g, l.ti, l.ut
	// Switches routed through a must continue on used turns.
	for cc := g.Off[a]; cc < g.Off[a+1]; cc++ {
		in := g.Rev[cc]
		if l.via[g.Tail[in]] == in && !ut.isUsed(ti.id(in, c2)) {
			return false
		}
	}
	b2 := g.Head[c2]
	t2, new2 := int32(-1), false
	if nb := l.via[b2]; nb >= 0 {
		t2 = ti.id(c2, nb)
		if !ut.isUsed(t2) {
			if ut.state[t2] == tBlocked || !ut.use(c2, nb, tWet) {
				return false
			}
			new2 = true
		}
	}
	t3 := ti.id(c, c2)
	if !ut.isUsed(t3) {
		if ut.state[t3] == tBlocked || !ut.use(c, c2, tWet) {
			if new2 {
				ut.release(t2)
			}
			return false
		}
		l.wet = append(l.wet, t3)
	}
	if new2 {
		l.wet = append(l.wet, t2)
	}
	// Commit: a leaves its old channel; the turns into it are no longer
	// needed by a's dependents.
	old := l.via[a]
	for cc := g.Off[a]; cc < g.Off[a+1]; cc++ {
		in := g.Rev[cc]
		if l.via[g.Tail[in]] == in {
			ut.release(ti.id(in, old))
		}
	}
	l.releaseTurn(old)
	l.via[a], l.dist[a] = c2, l.dist[b2]+w[c2]
	l.via[x], l.dist[x], l.usedOffer[x] = c, l.dist[a]+w[c], true // t3 is in use now
	return true
}

// incrementsByLevel is increments after a sweep: every route then leads
// one level closer in row (the sweep's and fillFromRow's hops), so the
// levels from the farthest in are a topological order of the paths.
func (l *layer) incrementsByLevel(row *levelRow, own []int64, mult int64) {
	g := l.g
	for _, v := range row.order {
		l.load[v] = own[v] * mult
	}
	for i := len(row.order) - 1; i > 0; i-- {
		v := row.order[i]
		c := l.via[v]
		if c < 0 {
			continue
		}
		l.inc = append(l.inc, incEntry{c, l.load[v]})
		l.load[g.Head[c]] += l.load[v]
	}
}

// increments adds, for every switch routing towards dsw, its sources
// (own: terminal ports per switch) to each channel of its path (Algorithm
// 4.1, line 10), as entries in l.inc.
func (l *layer) increments(dsw int32, own []int64, mult int64) {
	g := l.g
	l.queue = l.queue[:0]
	for v := range l.via {
		l.indeg[v], l.load[v] = 0, 0
	}
	for v, c := range l.via {
		if c >= 0 {
			l.indeg[g.Head[c]]++
			l.load[v] = own[v] * mult
		}
	}
	for v, c := range l.via {
		if c >= 0 && l.indeg[v] == 0 {
			l.queue = append(l.queue, int32(v))
		}
	}
	for h := 0; h < len(l.queue); h++ {
		v := l.queue[h]
		c := l.via[v]
		l.inc = append(l.inc, incEntry{c, l.load[v]})
		n := g.Head[c]
		if n == dsw {
			continue
		}
		l.load[n] += l.load[v]
		if l.indeg[n]--; l.indeg[n] == 0 {
			l.queue = append(l.queue, n)
		}
	}
}
