package routing

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// ErrNoRepair means Repair could not keep the old routing's structure; a
// full routing is needed.
var ErrNoRepair = errors.New("no minimal repair")

// RepairStats says what Repair changed.
type RepairStats struct {
	Dests   int // destinations whose paths the fabric change broke
	Breaks  int // (switch, destination) entries that led into a failed cable or switch
	Changed int // LFT entries rewritten (Breaks, each re-pointed once)
}

// Repair returns old adapted to g, a fabric that differs from the one old
// was computed for by failed (or repaired) cables and switches, changing
// as few entries as it can: an entry changes only where it led into a
// cable or switch that is gone (a "break point"); everything upstream of
// it is healed with it, and every other entry, SL and SL2VL map is kept.
//
// A break point u of destination d is re-pointed to a neighbour v whose
// own path to d is intact (it cannot lead back through u, which leads
// nowhere), the closest such neighbour first, but only if the new
// channel dependencies keep the channel dependency graph of d's VL
// acyclic: every channel into u that carries traffic towards d now
// depends on u→v, and u→v on v's next channel (Nue's per-layer
// acyclicity argument, Domke et al., HPDC 2016, §4; the layer is the VL
// of d's SL). The CDG of each touched VL is built from the tables (every
// entry counts), and each candidate is checked by a search for a path
// from the dependency's head back to its tail.
//
// A repaired cable breaks nothing: old is returned unchanged (it is still
// deadlock-free; the cable carries traffic again after the next full
// routing). It fails with ErrNoRepair when the SLs depend on the source
// or the SL2VL tables differ by port (the per-destination layer argument
// does not hold), when old does not fit g, or when a break point has no
// admissible neighbour (the destination is unreachable or every detour
// closes a cycle). The result must still be verified (cdg.Verify).
//
// Cost: O(S × LIDs) to find the break points, plus per touched VL the
// CDG of its destinations and one graph search per candidate tried.
func Repair(ctx context.Context, g *fabric.Graph, old *lft.Routing) (*lft.Routing, RepairStats, error) {
	var st RepairStats
	if err := old.CheckShape(g); err != nil {
		return nil, st, fmt.Errorf("%w: %v", ErrNoRepair, err)
	}
	if !old.SL.PerDest() || !old.SL2VL.Uniform() {
		return nil, st, fmt.Errorf("%w: SLs per source or SL2VL tables per port", ErrNoRepair)
	}
	r := old.Clone()
	rp := &repairer{g: g, r: r, state: make([]uint8, g.NumSwitches()), cdgs: map[uint8]*depGraph{}}
	for d := 1; d <= g.MaxLID(); d++ {
		if d%256 == 0 && ctx.Err() != nil {
			return nil, st, ctx.Err()
		}
		breaks := rp.breakPoints(d)
		if len(breaks) == 0 {
			continue
		}
		st.Dests++
		st.Breaks += len(breaks)
		n, err := rp.repairDest(d, breaks)
		st.Changed += n
		if err != nil {
			return nil, st, err
		}
	}
	return r, st, nil
}

type repairer struct {
	g     *fabric.Graph
	r     *lft.Routing
	state []uint8 // per switch, for the destination at hand: walk state
	cdgs  map[uint8]*depGraph
	// noTransit marks switches re-pointed for their own packets only
	// (nothing flows into them, no terminals): their new channel's
	// dependencies were not recorded, so no repair may route through them.
	noTransit map[int32]bool
}

// Walk states of a switch towards one destination.
const (
	stUnknown uint8 = iota
	stOnStack
	stOK
	stBroken
)

// next returns the switch u's entry leads to (-1: the destination's own
// switch delivers, or the entry leads nowhere usable) and whether the
// entry is usable at all.
func (rp *repairer) next(u int32, d int, dsw int32) (int32, bool) {
	if u == dsw {
		return -1, true
	}
	p := rp.r.Port(u, d)
	if p == lft.NoPort || p == 0 {
		return -1, false
	}
	c := rp.g.ChannelAt(u, p)
	if c < 0 {
		return -1, false // a failed cable, or a port to a CA that is not d
	}
	return rp.g.Head[c], true
}

// breakPoints returns the switches whose entry for d leads into a failed
// cable or switch (or nowhere), reached from a switch that routes to d.
func (rp *repairer) breakPoints(d int) []int32 {
	dsw, term := rp.g.Owner(d)
	if term >= 0 {
		dsw = rp.g.Terms[term].Switch
	}
	if dsw < 0 {
		return nil
	}
	for i := range rp.state {
		rp.state[i] = stUnknown
	}
	var breaks []int32
	for s := int32(0); int(s) < rp.g.NumSwitches(); s++ {
		rp.walk(s, d, dsw, &breaks)
	}
	return breaks
}

// walk follows u's path to d and marks every switch on it OK or broken,
// recording the switch whose own entry is unusable.
func (rp *repairer) walk(u int32, d int, dsw int32, breaks *[]int32) uint8 {
	var path []int32
	x := u
	res := stBroken
	for {
		if s := rp.state[x]; s == stOK || s == stBroken {
			res = s
			break
		} else if s == stOnStack {
			res = stBroken // a loop: every switch on it is broken
			*breaks = append(*breaks, x)
			break
		}
		rp.state[x] = stOnStack
		path = append(path, x)
		y, ok := rp.next(x, d, dsw)
		if !ok {
			*breaks = append(*breaks, x)
			res = stBroken
			break
		}
		if y < 0 {
			res = stOK
			break
		}
		x = y
	}
	for _, p := range path {
		rp.state[p] = res
	}
	return res
}

// repairDest re-points d's break points; switches turn OK as they are
// repaired, so a break point may use one repaired before it.
func (rp *repairer) repairDest(d int, breaks []int32) (int, error) {
	g, r := rp.g, rp.r
	dsw, term := g.Owner(d)
	if term >= 0 {
		dsw = g.Terms[term].Switch
	}
	vl := r.SL2VL.Default[r.SL.ByDest[d]&0xF]
	dg := rp.layer(vl)
	changed := 0
	pending := breaks
	rp.noTransit = map[int32]bool{}
	queued := map[int32]bool{}
	for _, u := range breaks {
		queued[u] = true
	}
	for len(pending) > 0 {
		var left []int32
		progress := false
		for _, u := range pending {
			if rp.state[u] == stOK {
				progress = true
				continue // healed through another break point
			}
			if rp.fix(u, d, dsw, dg) {
				changed++
				progress = true
				rp.reclassify(d, dsw)
				continue
			}
			left = append(left, u)
		}
		if !progress {
			// No admissible detour at the break points: move the choice one
			// hop upstream. The switches sending d's traffic into a stuck
			// break point look for another way; with nothing flowing into it
			// the break point itself has fewer dependencies to honour.
			var up []int32
			for _, u := range left {
				for _, w := range rp.preds(u, d) {
					if !queued[w] {
						queued[w] = true
						up = append(up, w)
					}
				}
			}
			if len(up) == 0 {
				return changed, fmt.Errorf("%w: LID %d: switch %s has no neighbour with an intact path that keeps VL %d's dependencies acyclic",
					ErrNoRepair, d, g.SwitchName(left[0]), vl)
			}
			left = append(up, left...)
		}
		pending = left
	}
	return changed, nil
}

// preds lists the switches whose entry for d leads to u.
func (rp *repairer) preds(u int32, d int) []int32 {
	g := rp.g
	var out []int32
	for c := g.Off[u]; c < g.Off[u+1]; c++ {
		w := g.Head[c]
		if p := rp.r.Port(w, d); p != lft.NoPort && p != 0 && g.ChannelAt(w, p) == g.Rev[c] {
			out = append(out, w)
		}
	}
	return out
}

// reclassify re-walks every switch for d after a repair.
func (rp *repairer) reclassify(d int, dsw int32) {
	for i := range rp.state {
		rp.state[i] = stUnknown
	}
	var sink []int32
	for s := int32(0); int(s) < rp.g.NumSwitches(); s++ {
		rp.walk(s, d, dsw, &sink)
	}
}

// fix re-points break point u towards d through an OK neighbour whose new
// dependencies keep dg acyclic; it adds them to dg.
func (rp *repairer) fix(u int32, d int, dsw int32, dg *depGraph) bool {
	g, r := rp.g, rp.r
	// Channels into u that carry traffic towards d.
	var in []int32
	for _, w := range rp.preds(u, d) {
		in = append(in, g.ChannelAt(w, r.Port(w, d)))
	}
	best := rp.pick(u, d, dsw, func(c, out int32) bool { return dg.admissible(in, c, out) })
	// A switch without terminals that nothing routes d's traffic through
	// sends only its own packets (management, VL15): they need a path, not
	// acyclic dependencies. Its new dependencies go unrecorded, so no
	// later repair of d may route through it.
	own := best < 0 && len(in) == 0 && g.TermOff[u] == g.TermOff[u+1]
	if own {
		best = rp.pick(u, d, dsw, func(int32, int32) bool { return true })
	}
	if best < 0 {
		return false
	}
	if own {
		rp.noTransit[u] = true
	} else {
		dg.add(in, best, rp.outOf(g.Head[best], d, dsw))
	}
	r.SetPort(u, d, g.OutPort[best])
	return true
}

// pick returns u's channel to an OK neighbour that ok accepts (given the
// channel and the neighbour's channel onwards), trying the neighbours
// closest to d first (ok may be a graph search), or -1.
func (rp *repairer) pick(u int32, d int, dsw int32, ok func(c, out int32) bool) int32 {
	g := rp.g
	type cand struct {
		c    int32
		hops int
	}
	var cs []cand
	for c := g.Off[u]; c < g.Off[u+1]; c++ {
		if v := g.Head[c]; rp.state[v] == stOK && !rp.noTransit[v] {
			cs = append(cs, cand{c, rp.hops(v, d, dsw)})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.hops - b.hops })
	for _, x := range cs {
		if ok(x.c, rp.outOf(g.Head[x.c], d, dsw)) {
			return x.c
		}
	}
	return -1
}

// outOf returns v's channel towards d (-1 at d's switch).
func (rp *repairer) outOf(v int32, d int, dsw int32) int32 {
	if v == dsw {
		return -1
	}
	return rp.g.ChannelAt(v, rp.r.Port(v, d))
}

// hops counts v's switch hops to d along the tables.
func (rp *repairer) hops(v int32, d int, dsw int32) int {
	n := 0
	for x := v; x != dsw && n <= rp.g.NumSwitches(); n++ {
		y, ok := rp.next(x, d, dsw)
		if !ok || y < 0 {
			break
		}
		x = y
	}
	return n
}
