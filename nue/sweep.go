package nue

import (
	"encoding/binary"
	"math/bits"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
)

// The sweep: the search of one destination without a priority queue, for
// the usual case where every path it finds is a shortest path.
//
// Channel weights are w0 + load with w0 = (number of LIDs)², so that path
// length dominates load (Algorithm 4.1's initial weight). As long as h
// channels carry less load together than one channel's w0, for every level
// h of the breadth-first search from the destination switch, the Dijkstra
// settles the switches level by level: a switch at distance h is offered
// keys in [h·w0, (h+1)·w0) by its neighbours at distance h−1 and only
// larger ones by any other. So the sweep relaxes, level by level, only the
// channels from one level to the previous one, and gives the Dijkstra's
// tables bit for bit without its queue:
//   - A switch's best offer is the least by (key, used turn first, less
//     loaded first hop) and, among equal ones, the one of the neighbour
//     settled first, i.e. of least (key, index): the order of the
//     relaxations does not matter.
//   - Within a level the Dijkstra settles by (key, index) and puts each
//     switch's new turn into the used turns. If all of a level's new turns
//     go in without a cycle in some order, they do so in every order (the
//     result is the same acyclic set), so the order does not matter either.
//   - In the level where the last source switch is reached, the Dijkstra
//     stops right after it: the switches of larger key stay unsettled.
//
// Each switch of a level takes its best offer from the previous level
// (pull), reading those switches' keys and used and blocked turns from
// one array (nearSwitch): the offers are most of the sweep's work.
//
// It stops where the Dijkstra leaves that pattern: a level whose loads
// could reach w0, a switch all of whose offers from the previous level
// continue on blocked turns, or a new turn that would close a cycle (the
// Dijkstra then re-offers, or backtracks). Switch LIDs' searches charge a
// new turn two levels' worth (layer.newTurn): there a switch settled over
// a new turn comes after the next level, so the sweep stops at any new
// turn it would settle. The levels before are settled
// as the Dijkstra settles them (the order of the used turns aside, which
// no result depends on), and the level's offers are those the Dijkstra
// has made by then: the sweep takes back the level's settling, and the
// Dijkstra resumes from there with the level's switches queued. A layer
// whose sweeps often stop (tori, where blocked turns make detours common)
// stops trying.

// levelRow is the breadth-first structure of the switch graph from one
// destination switch.
type levelRow struct {
	order []int32 // the switches of its component, level by level
	start []int32 // level h is order[start[h]:start[h+1]]
	// par: by switch, bit i set if its i-th channel leads one level
	// closer (switch degrees ≤ 64 here), little-endian in parBytes(g)
	// bytes per switch (1, 2, 4 or 8: the fewest that hold the largest
	// degree), so that a small fabric's rows take few fresh pages.
	par []byte
	pw  int // bytes per switch in par
}

// parOf returns switch v's mask of channels one level closer.
func (r *levelRow) parOf(v int32) uint64 {
	switch r.pw {
	case 1:
		return uint64(r.par[v])
	case 2:
		return uint64(binary.LittleEndian.Uint16(r.par[2*v:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(r.par[4*v:]))
	}
	return binary.LittleEndian.Uint64(r.par[8*v:])
}

// setPar sets switch v's mask (see par).
func (r *levelRow) setPar(v int32, m uint64) {
	switch r.pw {
	case 1:
		r.par[v] = byte(m)
	case 2:
		binary.LittleEndian.PutUint16(r.par[2*v:], uint16(m))
	case 4:
		binary.LittleEndian.PutUint32(r.par[4*v:], uint32(m))
	default:
		binary.LittleEndian.PutUint64(r.par[8*v:], m)
	}
}

// parBytes returns the bytes a level row keeps per switch: 1, 2, 4 or 8,
// the fewest that hold the largest switch degree (≤ 64).
func parBytes(g *fabric.Graph) int {
	d := 1
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		d = max(d, g.Degree(s))
	}
	b := 1
	for 8*b < d {
		b *= 2
	}
	return b
}

// levelRows holds a levelRow for every switch, each built when first
// needed and then shared read-only by the layers, while they fit
// tuning.maxLevelBytes; beyond that each layer builds the row it needs into its
// own scratch (see layer.row). Nobody waits for a row: whoever finds it
// being built by another goroutine builds a copy of its own (rows depend
// on the fabric alone), so a builder the operating system holds back
// holds back no search.
type levelRows struct {
	g     *fabric.Graph
	rows  []levelRow
	state []atomic.Uint32 // rowNone, rowBuilding or rowReady
	pw    int             // the rows' parBytes
}

// Row states.
const (
	rowNone uint32 = iota
	rowBuilding
	rowReady
)

// buildRow computes the row of switch s into r, reusing its storage, pw
// bytes per switch in par (parBytes); lv is scratch of one entry per
// switch.
func buildRow(g *fabric.Graph, s int32, r *levelRow, lv []int32, pw int) {
	S := g.NumSwitches()
	if cap(r.order) < S {
		r.order = make([]int32, S)
	}
	if len(r.par) < pw*S {
		r.par = make([]byte, pw*S)
	}
	r.pw = pw
	order := r.order[:S]
	for i := range lv {
		lv[i] = -1
	}
	// Breadth-first, noting each switch's channels one level closer as
	// it is dequeued: those levels are final by then.
	lv[s], order[0] = 0, s
	r.start = append(r.start[:0], 0)
	n := 1
	for h := 0; h < n; h++ {
		v := order[h]
		if h > 0 && lv[v] > lv[order[h-1]] {
			r.start = append(r.start, int32(h))
		}
		lp := lv[v] - 1
		var m uint64
		off := g.Off[v]
		// Whether a neighbour is one level closer is unpredictable: a
		// bit computed without a branch.
		for i, x := range g.Head[off:g.Off[v+1]] {
			lx := lv[x]
			if lx < 0 {
				lv[x] = lp + 2
				order[n] = x
				n++
				continue
			}
			m |= uint64(b2i(lx == lp)) << uint(i)
		}
		r.setPar(v, m)
	}
	r.order = order[:n]
	r.start = append(r.start, int32(n))
}

// newLevelRows prepares the shared rows, or returns nil when they would
// not fit maxBytes.
func newLevelRows(g *fabric.Graph, maxBytes int64) *levelRows {
	S, pw := g.NumSwitches(), parBytes(g)
	if int64(S)*int64(S)*int64(4+pw) > maxBytes {
		return nil
	}
	lr := &levelRows{g: g, rows: make([]levelRow, S), state: make([]atomic.Uint32, S), pw: pw}
	order, par := make([]int32, S*S), make([]byte, S*S*pw)
	for s := range lr.rows {
		n := S * pw
		lr.rows[s] = levelRow{order: order[s*S : s*S : (s+1)*S], par: par[s*n : (s+1)*n : (s+1)*n], pw: pw}
	}
	return lr
}

// warmBehind builds the rows of the given switches, in that order, on one
// goroutine of its own while the searches run: a fat tree's searches keep
// one core busy and leave the other idle. A search that needs a row not
// built yet builds it itself (see row). The returned function stops the
// goroutine and waits for it.
func (lr *levelRows) warmBehind(order []int32) (stop func()) {
	var quit atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		lv := make([]int32, len(lr.rows))
		for _, s := range order {
			if quit.Load() {
				return
			}
			if lr.state[s].CompareAndSwap(rowNone, rowBuilding) {
				buildRow(lr.g, s, &lr.rows[s], lv, lr.pw)
				lr.state[s].Store(rowReady)
			}
		}
	}()
	return func() {
		quit.Store(true)
		<-done
	}
}

// rowOrder lists the switches of the destinations in the order the
// sequential schedule first routes them (see schedule), then the rest.
func rowOrder(parts [][]dest, S int) []int32 {
	seen := make([]bool, S)
	order := make([]int32, 0, S)
	add := func(s int32) {
		if !seen[s] {
			seen[s] = true
			order = append(order, s)
		}
	}
	for i := 0; ; i++ {
		more := false
		for _, ds := range parts {
			if i < len(ds) {
				more = true
				add(ds[i].sw)
			}
		}
		if !more {
			break
		}
	}
	for s := int32(0); int(s) < S; s++ {
		add(s)
	}
	return order
}

// row returns the level row of switch s, building it on first use, or nil
// while another goroutine builds it; lv is the caller's scratch.
func (lr *levelRows) row(s int32, lv []int32) *levelRow {
	switch lr.state[s].Load() {
	case rowReady:
		return &lr.rows[s]
	case rowNone:
		if lr.state[s].CompareAndSwap(rowNone, rowBuilding) {
			buildRow(lr.g, s, &lr.rows[s], lv, lr.pw)
			lr.state[s].Store(rowReady)
			return &lr.rows[s]
		}
	}
	return nil
}

// row returns the level row of switch s: the shared one, or one built in
// the layer's own scratch (no shared rows, or the shared one still being
// built).
func (l *layer) row(s int32) *levelRow {
	if l.rows != nil {
		if r := l.rows.row(s, l.lvl); r != nil {
			return r
		}
	}
	if l.ownRowOf != s || l.ownRow.start == nil {
		buildRow(l.g, s, &l.ownRow, l.lvl, l.ti.parBytes)
		l.ownRowOf = s
	}
	return &l.ownRow
}

// trySweep runs the sweep for destination switch dsw under weights w (see
// above) and reports whether it routed it. If not, it leaves the search
// where the Dijkstra would be after settling the levels before the one
// where the sweep stopped, and returns that level's switches and the
// sources reached (resume); a nil resume means the Dijkstra starts afresh
// from the reset scratch.
func (l *layer) trySweep(dsw int32, w []int64) (done bool, resume []int32, reached int32) {
	t := l.tune
	if t.noSweep || l.ti.hs == nil || t.relaxWide {
		return false, nil, 0
	}
	// A run whose sweeps often stop short stops trying (tori, random
	// fabrics; figures: bench/nue/NOTES.md). The layers judge together:
	// they route the same kind of fabric, and a layer of few searches
	// would spend most of them probing. Switch LIDs' sweeps (new turns
	// charged) are judged apart: they stop short for other reasons.
	sc, giveUp := l.sweepCount[0], int64(t.sweepGiveUp)
	if l.newTurn > 0 {
		// A switch LID's sweep that stops short leaves the Dijkstra
		// the levels it settled: only when most stop is it a loss.
		sc, giveUp = l.sweepCount[1], 2
	}
	if n := sc.tries.Load(); n >= int64(t.sweepProbe) && sc.fails.Load()*giveUp > n {
		return false, nil, 0
	}
	sc.tries.Add(1)
	done, resume, reached = l.sweep(dsw, w)
	if done {
		l.stats.Sweeps++
	} else {
		sc.fails.Add(1)
	}
	return done, resume, reached
}

// sweepCount counts a run's sweeps and those that stopped short, over all
// its layers (atomic: layers may search side by side).
type sweepCount struct{ tries, fails atomic.Int64 }

// sweep is the level-by-level search; see trySweep. In a switch LID's
// search (new turns charged two levels' worth) the switches of a level
// that only a new turn reaches are left to the Dijkstra (deferred): their
// keys exceed every key of the next level, so when that level holds the
// last source the Dijkstra never settles them; otherwise the sweep stops
// there and hands them over with the level.
func (l *layer) sweep(dsw int32, w []int64) (bool, []int32, int32) {
	ut := l.ut
	row := l.row(dsw)
	reached, target := int32(0), l.compSrc[l.comp[dsw]]
	l.dist[dsw], l.settled[dsw] = 0, true
	// The destination's own switch continues on no turn: as if used.
	l.near[dsw] = nearSwitch{0, ^uint64(0), 0}
	if l.src[dsw] {
		reached++
	}
	if reached == target {
		return true, nil, reached
	}
	l.deferred = l.deferred[:0]
	for h := 1; h+1 < len(row.start); h++ {
		// Level h's offers: the Dijkstra's once it has settled the
		// levels before (their keys are all below h·w0). What pull reads
		// of level h−1 first, in a loop of its own: its loads (ut.cb of
		// each switch's channel, mostly cache misses) then overlap. A
		// deferred switch offers nothing.
		for _, u := range row.order[row.start[h-1]:row.start[h]] {
			if c := l.via[u]; c >= 0 {
				cc := ut.cb[int(c)*4 : int(c)*4+4] // one mask word: stride 4
				l.near[u] = nearSwitch{l.dist[u], cc[2], cc[3]}
				if !l.settled[u] {
					l.near[u].mb = ^uint64(0)
				}
			}
		}
		lev := row.order[row.start[h]:row.start[h+1]]
		if row.pw == 1 { // parOf without its switch
			for _, v := range lev {
				l.pull(v, uint64(row.par[v]), w)
			}
		} else {
			for _, v := range lev {
				l.pull(v, row.parOf(v), w)
			}
		}
		// Keys of level h stay below h·(w0 + span) < (h+1)·w0.
		if l.span > 0 && int64(h) > (l.w0-1)/l.span {
			return false, l.resume(lev), reached
		}
		n, last, ok := l.levelSources(lev)
		final := reached+n == target
		if !ok || len(l.deferred) > 0 && !final {
			return false, l.resume(lev), reached
		}
		if nd := len(l.deferred); !l.settleLevel(lev, final, last) {
			l.deferred = l.deferred[:nd] // lev's own are in lev
			return false, l.resume(lev), reached
		}
		if final {
			return true, nil, reached + n
		}
		if l.lateral() {
			break
		}
		reached += n
	}
	// Not reached (the last level holds a source), or a deferred switch
	// with an offer the sweep does not make: leave the Dijkstra a clean
	// start, as when the sweep does not run.
	for _, t := range l.wet {
		ut.release(t)
	}
	l.resetSearch()
	return false, nil, 0
}

// lateral reports whether a switch deferred from the level just settled
// has a settled neighbour in that level over a used turn: the Dijkstra
// offers it that turn at a key within the next level's, which the sweep
// does not follow.
func (l *layer) lateral() bool {
	g, ut, hs := l.g, l.ut, l.ti.hs
	for _, v := range l.deferred {
		for c := g.Off[v]; c < g.Off[v+1]; c++ {
			x := hs[c]
			u, j := int32(x>>6), x&63
			if l.settled[u] && l.via[u] >= 0 && ut.cb[int(l.via[u])*4+2]>>j&1 != 0 {
				return true
			}
		}
	}
	return false
}

// resume is where the Dijkstra takes over from a sweep stopped in level
// lev: its switches, and those deferred from the level before.
func (l *layer) resume(lev []int32) []int32 {
	if len(l.deferred) == 0 {
		return lev
	}
	return append(l.deferred, lev...)
}

// levelSources counts the sources of level lev and finds the one where the
// Dijkstra would stop (the largest (key, index)); ok is false when a source
// has no offer.
func (l *layer) levelSources(lev []int32) (n, last int32, ok bool) {
	last = -1
	for _, v := range lev {
		if l.src[v] {
			n++
			if l.via[v] < 0 {
				return n, last, false
			}
			if last < 0 || l.dist[v] > l.dist[last] || l.dist[v] == l.dist[last] && v > last {
				last = v
			}
		}
	}
	return n, last, true
}

// settleLevel settles the switches of level lev over their offers (when
// final, only those up to the source last, as the Dijkstra would); when an
// offer continues on a blocked turn or its turn closes a cycle it takes
// the level back and returns false.
func (l *layer) settleLevel(lev []int32, final bool, last int32) bool {
	g, ut := l.g, l.ut
	wet := len(l.wet)
	for _, v := range lev {
		c := l.via[v]
		if final && (l.dist[v] > l.dist[last] || l.dist[v] == l.dist[last] && v > last) {
			continue // after the last source: not settled
		}
		if c < 0 {
			if final {
				continue // offered only a detour: settled after the last source
			}
			// Every offer continues on a blocked turn.
			l.unsettle(lev, wet)
			return false
		}
		if !l.usedOffer[v] {
			if l.newTurn > 0 && !final && !l.src[v] {
				// A new turn costs more than a level (switch LIDs):
				// the Dijkstra settles the next level first.
				l.deferred = append(l.deferred, v)
				continue
			}
			if l.newTurn > 0 {
				// A source, or before the last source: the next level
				// comes first.
				l.unsettle(lev, wet)
				return false
			}
			// As accept, but a refused turn is not blocked: the
			// Dijkstra will refuse it in its own time. The turn is
			// not in use (pull read its bit in the level's snapshot,
			// and only v settles over c), nor blocked (pull skips
			// those), nor one from the destination's own switch
			// (counted as used).
			next := g.Head[c]
			nb := l.via[next]
			// ut.cb of c and nb (one mask word: stride 4); in
			// order already, the turn goes in at O(1).
			cc, cn := ut.cb[int(c)*4:int(c)*4+4], ut.cb[int(nb)*4:int(nb)*4+4]
			if int64(cn[0]) < int64(cc[0]) && !ut.insert(c, nb) {
				l.unsettle(lev, wet)
				return false
			}
			// As ut.setBits, with one mask word (the sweep's case).
			i := nb - g.Off[next]
			t := l.ti.base[c] + i
			ut.state[t] = tWet
			cc[1] |= 1 << uint(i)
			cn[2] |= 1 << (l.ti.hs[c] & 63)
			l.wet = append(l.wet, t)
		}
		l.settled[v] = true
	}
	return true
}

// unsettle takes back the settling of level lev, whose new turns start at
// l.wet[wet]: the Dijkstra settles a level in its own order, and checks
// the turns as it goes.
func (l *layer) unsettle(lev []int32, wet int) {
	for _, t := range l.wet[wet:] {
		l.ut.release(t)
	}
	l.wet = l.wet[:wet]
	for _, v := range lev {
		l.settled[v] = false
	}
}

// nearSwitch is what pull reads of a switch one level closer: its key,
// and its used and blocked turns onto its channel.
type nearSwitch struct {
	dist   int64
	mu, mb uint64
}

// pull is relax for the sweep: switch v takes the best offer of its
// neighbours one level closer (par), by (key, used turn first, less loaded
// first hop, neighbour of least index), as the Dijkstra's relaxations in
// (key, index) order leave it; between parallel channels from one
// neighbour, the first in its order wins, as in relax. An offer over a
// turn not in use costs the search's newTurn more, as there.
func (l *layer) pull(v int32, par uint64, w []int64) {
	off := l.g.Off[v]
	hs, near := l.ti.hs, l.near
	bc, bd, bu, bw, bp, bj := int32(-1), inf, false, int64(0), int32(0), uint32(0)
	for ; par != 0; par &= par - 1 {
		c := off + int32(bits.TrailingZeros64(par))
		x := hs[c]
		u, j := int32(x>>6), x&63
		n := &near[u]
		if n.mb>>j&1 != 0 {
			continue
		}
		used, wc := n.mu>>j&1 != 0, w[c]
		nd := n.dist + wc
		if !used {
			nd += l.newTurn
		}
		if bc >= 0 {
			switch {
			case nd != bd:
				if nd > bd {
					continue
				}
			case l.usedFirst && used != bu:
				if !used {
					continue
				}
			case wc != bw:
				if wc > bw {
					continue
				}
			case u != bp:
				if u > bp {
					continue
				}
			case j > bj:
				continue
			}
		}
		bc, bd, bu, bw, bp, bj = c, nd, used, wc, u, j
	}
	if bc >= 0 {
		l.via[v], l.dist[v], l.usedOffer[v] = bc, bd, bu
	}
}
