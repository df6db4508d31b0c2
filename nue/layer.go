package nue

import (
	"math"
	"math/bits"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// LayerStats describe one virtual layer of a Nue run.
type LayerStats struct {
	Layer        int    // index = SL = VL
	Root         string // root switch of the escape paths (first component)
	Destinations int    // LIDs routed in the layer
	Searches     int    // searches run: LIDs sharing one count once (share=switch)
	Sweeps       int    // of which done by the sweep (sweep.go) rather than the Dijkstra
	Fallbacks    int    // destinations routed on the escape paths
	// PartialFallbacks counts terminal destinations whose unreached
	// sources took the escape paths while the rest kept their routes.
	PartialFallbacks int
	TermFallbacks    int // of which CA or router LIDs
	Backtracks       int // successful local backtracking steps
	EscapeTurns      int // turns of the escape paths
	UsedTurns        int // turns in use at the end (escape paths included)
	BlockedTurns     int // turns refused because they would close a cycle
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
	// usedFirst: ties between offers go to a turn already in use. Off
	// with the round-robin partition (indirect networks), where shortest
	// paths go up, then down, and never need a turn the layer blocks:
	// there the turns a layer happens to use would only tie the choice to
	// the partition and undo the LID-order pattern that balances fat
	// trees, so every k routes the terminal LIDs as one layer does
	// (nue/README.md, "Destination order").
	usedFirst bool

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
	esc       []int32 // scratch of partialEscape: escape routes
	inF       []bool  // scratch of partialEscape: switches on them
	onPath    []bool  // scratch of commitCarried
	inc       []incEntry
	members   []member // scratch of write
	stats     LayerStats
	tune      *tuning // shared, read-only

	// newTurn is what the current search adds to a key for an offer
	// over a turn not in use: 0 for terminal LIDs; for switch LIDs, which
	// carry no load, newTurnCost, two hops' worth. Their searches then
	// settle the switches a used turn reaches before those only a new
	// turn reaches, and stop once every source is settled: on fat trees
	// the switches between the levels offer each other valleys (down,
	// then up) that nearly always close a cycle and that no source's path
	// needs, so their cycle checks are never run. A path saving more
	// than two hops still takes a new turn.
	newTurn, newTurnCost int64
	// The sweep (sweep.go): w0 is the initial channel weight and span
	// the most load any channel carries, as of the current step.
	w0, span   int64
	rows       *levelRows // shared; nil: build ownRow as needed
	ownRow     levelRow
	ownRowOf   int32
	lvl        []int32        // scratch of buildRow
	near       []nearSwitch   // scratch of the sweep
	deferred   []int32        // the sweep's switches left to the Dijkstra
	sweepCount [2]*sweepCount // shared by the run's layers: terminal and switch LIDs
	// written: the last search's tables and weights are in place
	// (finishSweep): no write, no inc.
	written bool
}

const inf = int64(math.MaxInt64 / 4)

// switchScratch is the per-switch scratch of a layer's searches, one
// array per element type: fewer allocations, and fewer fresh pages on a
// small fabric. Layers whose searches never interleave (one goroutine,
// the sequential schedule: each search's results are written before the
// next search starts) share one, which also stays in cache.
type switchScratch struct {
	i64  []int64
	i32  []int32
	b    []bool
	near []nearSwitch
}

func newSwitchScratch(S int) *switchScratch {
	return &switchScratch{make([]int64, 2*S), make([]int32, 4*S), make([]bool, 2*S), make([]nearSwitch, S)}
}

// newLayer returns layer idx with destinations ds; its channels start in
// the order seq (see seedOrder). Its searches use sw's arrays (nil: its
// own).
func newLayer(idx int, g *fabric.Graph, ti *turnIndex, seq []int32, sc *sources, ds []dest, sw *switchScratch) *layer {
	S := g.NumSwitches()
	if sw == nil {
		sw = newSwitchScratch(S)
	}
	i64, i32, b := sw.i64, sw.i32, sw.b
	return &layer{
		idx: idx, g: g, ti: ti, comp: sc.comp, compSrc: sc.compSrc, own: sc.own, jobOwn: sc.jobOwn, src: sc.src, dests: ds,
		ut:   newUsedTurns(ti, seq),
		dist: i64[:S:S], load: i64[S:],
		via: i32[:S:S], indeg: i32[S : 2*S : 2*S], lvl: i32[2*S : 3*S : 3*S], queue: i32[3*S : 3*S],
		settled: b[:S:S], usedOffer: b[S:],
		near:  sw.near,
		stats: LayerStats{Layer: idx, Destinations: len(ds)}, sweepCount: [2]*sweepCount{{}, {}},
	}
}

// route computes the paths of every switch towards destination d under the
// channel weights w, leaves them in l.via (see write) and the weight
// increments in l.inc (Algorithm 4.1, lines 8–10); w is read-only, except
// that with out (d alone in its step) a sweep's results go straight into
// the weights and tables (finishSweep). It reports false when d is a
// switch LID whose escape routes were not marked in advance and cannot be
// added without a cycle (the caller then reroutes conservatively).
func (l *layer) route(d dest, w []int64, out *stepOut) bool {
	l.stats.Searches++
	l.resetSearch()
	l.newTurn = 0
	if d.phase == 2 {
		l.newTurn = l.newTurnCost
	}
	fb := l.stats.Fallbacks
	swept, resume, reached := l.trySweep(d.sw, w)
	if swept && out != nil {
		l.finishSweep(d, out)
		return true
	}
	if !swept {
		if resume == nil {
			// Nothing to take over: afresh.
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
	if d.phase == 2 {
		l.commitCarried(d.sw)
	} else {
		l.commitWet()
	}
	for v := range l.via {
		if !l.settled[v] && int32(v) != d.sw && l.stats.Fallbacks == fb {
			l.via[v] = -1 // a tentative offer, not a route
		}
	}
	l.fillUnreached(d.sw)
	if src, mult := l.sources(d); mult > 0 {
		if swept {
			l.incrementsByLevel(l.row(d.sw), src, mult)
		} else {
			l.increments(d.sw, src, mult)
		}
	}
	return true
}

// commitWet puts the search's tentative turns into use for good.
func (l *layer) commitWet() {
	for _, t := range l.wet {
		if l.ut.state[t] == tWet {
			l.ut.state[t] = tUsed
			l.ut.used++
		}
	}
}

// commitCarried puts into use for good the search's tentative turns that
// some source's path towards dsw takes, and releases the others: a switch
// no terminal's packets pass keeps its route (its own packets, which the
// acyclicity claim does not cover, follow the tree loop-free), but its
// turn stays free. Used for switch LIDs, whose searches settle many such
// switches; a turn put in use for none of their sources would only block
// the turns later searches need.
func (l *layer) commitCarried(dsw int32) {
	g := l.g
	if l.onPath == nil {
		l.onPath = make([]bool, len(l.via))
	}
	on := l.onPath
	clear(on)
	for v := int32(0); int(v) < len(l.via); v++ {
		if !l.src[v] {
			continue
		}
		for x := v; x != dsw && !on[x] && l.via[x] >= 0; x = g.Head[l.via[x]] {
			on[x] = true
		}
	}
	for _, t := range l.wet {
		if l.ut.state[t] != tWet {
			continue
		}
		a := l.ti.from(t)
		if x := g.Tail[a]; on[x] && l.via[x] == a {
			l.ut.state[t] = tUsed
			l.ut.used++
		} else {
			l.ut.release(t)
		}
	}
}

// sources returns the load per source switch of destination d's paths:
// the terminal ports per switch (SAR: of d's job) times mult, the
// terminal LIDs sharing the search; mult is 0 for switch LIDs, which
// carry next to no data, and in the switch-LID phase.
func (l *layer) sources(d dest) (src []int64, mult int64) {
	if d.term {
		mult++
	}
	for _, m := range d.also {
		if m.term {
			mult++
		}
	}
	if d.phase == 2 {
		return nil, 0
	}
	src = l.own
	if l.jobOwn != nil && d.job >= 0 {
		src = l.jobOwn[d.job]
	}
	return src, mult
}

// stepOut is where a search alone in its step puts its results at once:
// the channel weights (and the heaviest, wmax) and the tables.
type stepOut struct {
	w    []int64
	wmax *int64
	r    *lft.Routing
}

// finishSweep is the rest of route after a sweep, for a search alone in
// its step: the same routes, loads and tables, in passes over the
// destination's row instead of passes over all switches.
//   - Forward: switches the sweep left unsettled (after the last source)
//     get the first channel one level closer, as fillFromRow; the table
//     entries of d's LID; loads start at the sources'.
//   - Backward, from the farthest level in (a topological order of the
//     paths, see incrementsByLevel): the loads go onto the weights.
//   - The entries of LIDs sharing d's search (d.also), if any.
func (l *layer) finishSweep(d dest, out *stepOut) {
	g, r := l.g, out.r
	l.commitWet()
	row := l.row(d.sw)
	order := row.order
	src, mult := l.sources(d)
	lid := int(d.lid)
	if mult > 0 {
		l.load[d.sw] = src[d.sw] * mult
	}
	for _, v := range order[1:] {
		c := l.via[v]
		if !l.settled[v] {
			c = g.Off[v] + int32(bits.TrailingZeros64(row.parOf(v)))
			l.via[v] = c
			l.stats.FilledHops++
		}
		r.SetPort(v, lid, g.OutPort[c])
		if mult > 0 {
			l.load[v] = src[v] * mult
		}
	}
	if mult > 0 {
		w, wmax := out.w, *out.wmax
		for i := len(order) - 1; i > 0; i-- {
			v := order[i]
			c := l.via[v]
			x := l.load[v]
			w[c] += x
			wmax = max(wmax, w[c])
			l.load[g.Head[c]] += x
		}
		*out.wmax = wmax
	}
	r.SetPort(d.sw, lid, d.port)
	r.SL.ByDest[lid] = uint8(l.idx)
	for _, m := range d.also {
		for _, v := range order[1:] {
			r.SetPort(v, int(m.lid), g.OutPort[l.via[v]])
		}
		r.SetPort(d.sw, int(m.lid), m.port)
		r.SL.ByDest[m.lid] = uint8(l.idx)
	}
	l.written = true
}

// resetSearch clears the scratch of one search.
func (l *layer) resetSearch() {
	l.resetScratch()
	l.wet = l.wet[:0]
	l.qreset()
}

// resetScratch clears the per-switch scratch an array at a time: each
// loop is a plain fill of one array, which compiles to a faster loop than
// one that writes all four.
func (l *layer) resetScratch() {
	for v := range l.dist {
		l.dist[v] = inf
	}
	for v := range l.via {
		l.via[v] = -1
	}
	clear(l.settled)
	clear(l.usedOffer)
}

// write puts the paths of the last route towards d (l.via) into r, for d
// and the LIDs sharing its search. It runs after a step's searches, on one
// goroutine: searches side by side would write into the same cache lines
// of the tables (neighbouring LIDs).
func (l *layer) write(d dest, r *lft.Routing) {
	g := l.g
	l.members = append(append(l.members[:0], member{d.lid, d.port, d.term}), d.also...)
	// Switch by switch, the members' entries in a row: neighbouring LIDs
	// (a switch's ports) share its cache lines.
	for v, c := range l.via {
		if c >= 0 {
			p := g.OutPort[c]
			for _, m := range l.members {
				r.SetPort(int32(v), int(m.lid), p)
			}
		}
	}
	for _, m := range l.members {
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
	row := l.row(dsw)
	for _, v := range row.order[1:] {
		if l.via[v] >= 0 {
			continue
		}
		l.via[v] = g.Off[v] + int32(bits.TrailingZeros64(row.parOf(v)))
		l.stats.FilledHops++
	}
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
