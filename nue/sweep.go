package nue

import (
	"math/bits"
	"sync"

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
// It gives up, having changed nothing but the order of the used turns
// (which no result depends on), where the Dijkstra leaves that pattern: a
// level whose loads could reach w0, a switch all of whose offers from the
// previous level continue on blocked turns, or a new turn that would close
// a cycle (the Dijkstra then re-offers, or backtracks). The caller then
// runs the Dijkstra. A layer whose sweeps often give up (tori, where
// blocked turns make detours common) stops trying.

// Sweep tuning: after sweepProbe attempts, a layer stops sweeping once more
// than one in sweepGiveUp of its sweeps gave up (torus 8×8×8, k = 8: 241
// of its first 256). Only speed depends on it; variables for tests.
var (
	sweepProbe  = 8
	sweepGiveUp = 4
)

// levelRow is the breadth-first structure of the switch graph from one
// destination switch.
type levelRow struct {
	order []int32 // the switches of its component, level by level
	start []int32 // level h is order[start[h]:start[h+1]]
	// kids: by switch, bit i set if its i-th channel leads one level
	// further (switch degrees ≤ 64 here).
	kids []uint64
}

// levelRows holds a levelRow for every switch, each built when first
// needed and then shared read-only by the layers, while they fit
// maxLevelBytes; beyond that each layer builds the row it needs into its
// own scratch (see layer.row).
type levelRows struct {
	g    *fabric.Graph
	rows []levelRow
	once []sync.Once
}

// maxLevelBytes bounds the shared rows (a variable for tests).
var maxLevelBytes int64 = 256 << 20

// buildRow computes the row of switch s into r, reusing its storage; lv is
// scratch of one entry per switch.
func buildRow(g *fabric.Graph, s int32, r *levelRow, lv []int32) {
	S := g.NumSwitches()
	if cap(r.order) < S {
		r.order = make([]int32, S)
	}
	if len(r.kids) < S {
		r.kids = make([]uint64, S)
	}
	order := r.order[:S]
	for i := range lv {
		lv[i] = -1
	}
	// Breadth-first, noting each switch's channels one level further
	// as it is dequeued: all of its neighbours are seen by then.
	lv[s], order[0] = 0, s
	r.start = append(r.start[:0], 0)
	n := 1
	for h := 0; h < n; h++ {
		v := order[h]
		if h > 0 && lv[v] > lv[order[h-1]] {
			r.start = append(r.start, int32(h))
		}
		lk := lv[v] + 1
		var m uint64
		off := g.Off[v]
		for c := off; c < g.Off[v+1]; c++ {
			x := g.Head[c]
			if lv[x] < 0 {
				lv[x] = lk
				order[n] = x
				n++
			}
			if lv[x] == lk {
				m |= 1 << uint(c-off)
			}
		}
		r.kids[v] = m
	}
	r.order = order[:n]
	r.start = append(r.start, int32(n))
}

// newLevelRows prepares the shared rows, or returns nil when they would
// not fit maxLevelBytes.
func newLevelRows(g *fabric.Graph) *levelRows {
	S := g.NumSwitches()
	if int64(S)*int64(S)*12 > maxLevelBytes {
		return nil
	}
	lr := &levelRows{g: g, rows: make([]levelRow, S), once: make([]sync.Once, S)}
	order, kids := make([]int32, S*S), make([]uint64, S*S)
	for s := range lr.rows {
		lr.rows[s] = levelRow{order: order[s*S : s*S : (s+1)*S], kids: kids[s*S : (s+1)*S]}
	}
	return lr
}

// warm builds every row on up to workers goroutines.
func (lr *levelRows) warm(workers int) {
	S := len(lr.rows)
	workers = max(1, min(workers, S))
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lv := make([]int32, S)
			for s := k; s < S; s += workers {
				lr.row(int32(s), lv)
			}
		}()
	}
	wg.Wait()
}

// row returns the level row of switch s, building it on first use; lv is
// the caller's scratch.
func (lr *levelRows) row(s int32, lv []int32) *levelRow {
	lr.once[s].Do(func() { buildRow(lr.g, s, &lr.rows[s], lv) })
	return &lr.rows[s]
}

// row returns the level row of switch s: the shared one, or one built in
// the layer's own scratch.
func (l *layer) row(s int32) *levelRow {
	if l.rows != nil {
		return l.rows.row(s, l.lvl)
	}
	if l.ownRowOf != s || l.ownRow.start == nil {
		buildRow(l.g, s, &l.ownRow, l.lvl)
		l.ownRowOf = s
	}
	return &l.ownRow
}

// trySweep runs the sweep for destination switch dsw under weights w (see
// above) and reports whether it routed it; if not, it leaves the search
// scratch reset for the Dijkstra.
func (l *layer) trySweep(dsw int32, w []int64) bool {
	if noSweep || l.ti.words != 1 || relaxWide {
		return false
	}
	if l.sweeps >= sweepProbe && l.sweepFails*sweepGiveUp > l.sweeps {
		return false
	}
	l.sweeps++
	if l.sweep(dsw, w) {
		l.stats.Sweeps++
		return true
	}
	l.sweepFails++
	for _, t := range l.wet {
		l.ut.release(t)
	}
	l.resetSearch()
	return false
}

// sweep is the level-by-level search; see trySweep.
func (l *layer) sweep(dsw int32, w []int64) bool {
	g, ut := l.g, l.ut
	row := l.row(dsw)
	reached, target := int32(0), l.compSrc[l.comp[dsw]]
	l.dist[dsw], l.settled[dsw] = 0, true
	if l.src[dsw] {
		reached++
	}
	if reached == target {
		return true
	}
	for h := 1; h+1 < len(row.start); h++ {
		// Keys of level h stay below h·(w0 + span) < (h+1)·w0.
		if l.span > 0 && int64(h) > (l.w0-1)/l.span {
			return false
		}
		for _, u := range row.order[row.start[h-1]:row.start[h]] {
			l.relaxKids(u, row.kids[u], w)
		}
		lev := row.order[row.start[h]:row.start[h+1]]
		// The level where the last sources are reached: the Dijkstra
		// stops after the one of largest (key, index).
		n, last := int32(0), int32(-1)
		for _, v := range lev {
			if l.src[v] {
				n++
				if l.via[v] < 0 {
					return false
				}
				if last < 0 || l.dist[v] > l.dist[last] || l.dist[v] == l.dist[last] && v > last {
					last = v
				}
			}
		}
		final := reached+n == target
		for _, v := range lev {
			c := l.via[v]
			if final && (l.dist[v] > l.dist[last] || l.dist[v] == l.dist[last] && v > last) {
				continue // after the last source: not settled
			}
			if c < 0 {
				if final {
					continue // offered only a detour: settled after the last source
				}
				return false // every offer continues on a blocked turn
			}
			if !l.usedOffer[v] {
				if next := g.Head[c]; next != dsw {
					// As accept, but a refused turn is not blocked: the
					// Dijkstra will refuse it in its own time.
					nb := l.via[next]
					t := l.ti.id(c, nb)
					if !ut.isUsed(t) {
						if !ut.insert(c, nb) {
							return false
						}
						ut.state[t] = tWet
						ut.setBits(c, nb, true)
						l.wet = append(l.wet, t)
					}
				}
			}
			l.settled[v] = true
		}
		if final {
			return true
		}
		reached += n
	}
	return false
}

// relaxKids is relax for the sweep: the settled switch u offers its
// channel to its neighbours one level further (kids). Among equal offers
// the one from the neighbour of least (key, index) wins, as in the
// Dijkstra, which relaxes in that order.
func (l *layer) relaxKids(u int32, kids uint64, w []int64) {
	g, ut := l.g, l.ut
	vu := l.via[u]
	mu := ^uint64(0)
	if vu >= 0 {
		mu = ut.in[vu]
		kids &^= ut.blk[vu]
	}
	du := l.dist[u]
	off := g.Off[u]
	for ; kids != 0; kids &= kids - 1 {
		i := bits.TrailingZeros64(kids)
		cc := off + int32(i)
		v := g.Head[cc]
		c := g.Rev[cc] // v -> u
		nd, used := du+w[c], mu>>uint(i)&1 != 0
		dv := l.dist[v]
		if nd > dv {
			continue
		}
		if nd == dv {
			old := l.via[v]
			if used != l.usedOffer[v] {
				if !used {
					continue
				}
			} else if wc, wo := w[c], w[old]; wc != wo {
				if wc > wo {
					continue
				}
			} else if p := g.Head[old]; p < u {
				continue // equal key and weight: equal distance, the lower index first
			}
		}
		l.via[v], l.dist[v], l.usedOffer[v] = c, nd, used
	}
}
