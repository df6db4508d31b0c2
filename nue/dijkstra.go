package nue

import "slices"

// The Dijkstra of a destination's search (Algorithm 4.1, line 8), for
// what the sweep (sweep.go) does not route: its queue, relaxation, the
// acceptance of a switch with its cycle check, and local backtracking.

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
		if x < 0 && d.term && l.partialEscape(d.sw) {
			l.stats.PartialFallbacks++
			break
		}
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

// relax offers every unsettled neighbour v of the settled switch u the
// channel v→u, continuing on u's own channel (Algorithm 4.1, line 8). The
// turn is only proposed here; accept checks it for cycles when v is about
// to be settled, so a search tries each unused turn at most once. Among
// equal offers, one over a used turn wins.
func (l *layer) relax(u int32, w []int64) {
	g, ut := l.g, l.ut
	vu := l.via[u]
	// The turns from u's in-channels onto vu, as bits by the slot of the
	// reverse channel (see usedTurns.cb): no per-turn state lookups.
	var inUsed, inBlk []uint64
	if vu >= 0 {
		inUsed, inBlk = ut.inMask(vu), ut.blkMask(vu)
	}
	du := l.dist[u]
	off, end := g.Off[u], g.Off[u+1]
	if l.ti.words == 1 && !l.tune.relaxWide {
		// Degree ≤ 64, the usual case: both masks in registers; the
		// destination's own switch (vu < 0) continues on no turn, which
		// counts as used.
		mu, mb := ^uint64(0), uint64(0)
		if vu >= 0 {
			mu, mb = inUsed[0], inBlk[0]
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
			if mu&bit == 0 {
				nd += l.newTurn
			}
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
		if !used {
			nd += l.newTurn
		}
		if nd < l.dist[v] || (nd == l.dist[v] && l.better(c, used, v, w)) {
			l.via[v], l.dist[v], l.usedOffer[v] = c, nd, used
			l.qpush(v, nd)
		}
	}
}

// better breaks a tie between v's current offer and channel c: a used
// turn first (no new dependency; see layer.usedFirst), then the less
// loaded first hop (fat trees are symmetric enough for ties to be common,
// and this spreads them).
func (l *layer) better(c int32, used bool, v int32, w []int64) bool {
	if l.usedFirst && used != l.usedOffer[v] {
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
		if !used {
			nd += l.newTurn
		}
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

// partialEscape resolves an impasse of the search towards terminal
// destination dsw without giving up what it found: the unreached source
// switches take the escape routes (whose turns towards dsw are used
// already), and so does every switch those routes pass until they join a
// reached switch over a turn that is used or closes no cycle. A reached
// switch whose join fails takes the escape route itself, and the reached
// switches routing through it must then join it the same way. Each step
// only moves switches onto escape routes, so it ends at worst with every
// source on them (the full fallback). Every turn a source's path takes
// is then used, so the layer stays acyclic and, for the same reason, the
// paths are loop-free. It reports false when no source is unreached, or
// when an escape turn it needs is not in use (then nothing is committed
// and the caller falls back on the escape paths as a whole).
func (l *layer) partialEscape(dsw int32) bool {
	S := len(l.via)
	if l.esc == nil {
		l.esc, l.inF = make([]int32, S), make([]bool, S)
	}
	escapeRoutes(l.g, l.parent, l.comp, dsw, l.esc)
	clear(l.inF)
	l.queue = l.queue[:0]
	for v := int32(0); int(v) < S; v++ {
		if l.src[v] && !l.settled[v] && l.comp[v] == l.comp[dsw] {
			l.toEscape(v)
		}
	}
	if len(l.queue) == 0 {
		return false
	}
	for h := 0; h < len(l.queue); h++ {
		if !l.escapeStep(l.queue[h], dsw) {
			return false
		}
	}
	for _, v := range l.queue {
		l.via[v] = l.esc[v]
		l.settled[v] = true
	}
	l.releaseUnneeded(dsw)
	return true
}

// toEscape queues switch x to take its escape route (partialEscape).
func (l *layer) toEscape(x int32) {
	l.inF[x] = true
	l.queue = append(l.queue, x)
}

// escapeStep joins switch f's escape route to the next switch's route,
// and, if f was reached, the reached switches routing through f to f's
// escape route; whoever cannot join takes the escape route too. It
// reports false when an escape turn is not in use.
func (l *layer) escapeStep(f, dsw int32) bool {
	g, esc := l.g, l.esc
	if l.settled[f] {
		for cc := g.Off[f]; cc < g.Off[f+1]; cc++ {
			in := g.Rev[cc]
			if y := g.Tail[in]; !l.inF[y] && l.settled[y] && l.via[y] == in && !l.joinTurn(in, esc[f]) {
				l.toEscape(y)
			}
		}
	}
	switch x := g.Head[esc[f]]; {
	case x == dsw:
	case l.inF[x]:
		// An escape turn: marked for every source's route (see
		// markEscape), checked all the same.
		return l.ut.isUsed(l.ti.id(esc[f], esc[x]))
	case l.settled[x]:
		if !l.joinTurn(esc[f], l.via[x]) {
			l.toEscape(x)
		}
	default:
		l.toEscape(x)
	}
	return true
}

// joinTurn reports whether turn a→b is used or can be put in use (as a
// tentative turn of the search) without closing a cycle.
func (l *layer) joinTurn(a, b int32) bool {
	t := l.ti.id(a, b)
	if l.ut.isUsed(t) {
		return true
	}
	if l.ut.state[t] != tBlocked && l.ut.use(a, b, tWet) {
		l.wet = append(l.wet, t)
		return true
	}
	return false
}

// releaseUnneeded takes the search's tentative turns that no route
// towards dsw takes any more back out of use.
func (l *layer) releaseUnneeded(dsw int32) {
	g := l.g
	keep := l.wet[:0]
	for _, t := range l.wet {
		a := l.ti.from(t)
		n := g.Head[a]
		b := g.Off[n] + t - l.ti.base[a]
		if n != dsw && l.settled[g.Tail[a]] && l.via[g.Tail[a]] == a && l.via[n] == b {
			keep = append(keep, t)
			continue
		}
		l.ut.release(t)
	}
	l.wet = keep
}
