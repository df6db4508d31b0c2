package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/nuesm/nuesm/internal/parallel"
)

// The live plan's three epochs, separated by barriers: E1 while sources
// switch to their transition SLs (old paths, old or transition SL), E2
// while the ordered LFT writes land (old-prefix/new-suffix paths on the
// transition SL), E3 while sources switch to the new SLs (new paths,
// transition or new SL). A destination's dependencies in each epoch are
// its contribution; a drained (or not yet placed) destination contributes
// its old dependencies to all of them, so the graphs start as the old
// CDG, which is acyclic, and every accepted upgrade keeps all acyclic.
// With level barriers (Options.levelBarriers) E2 is split into one epoch
// per LFT level: a packet that took a switch's old entry has left the
// fabric before the next level's switches change.
const numEpochs = 3

// epochs is how many epochs the greedy keeps graphs for.
func (b *builder) epochs() int {
	if b.opt.levelBarriers {
		return 2 + int(b.levels)
	}
	return numEpochs
}

// greedy places the destinations with changed pairs one at a time, in LID
// order, each on the cheapest strategy that keeps the three epoch
// dependency graphs acyclic, or drained when none does.
//
// The drain phase opens before the live epochs (assemble, drainFirst): the
// changed pairs of drained destinations are paused throughout, so a
// destination not yet placed, or drained, contributes only the
// dependencies of its unchanged pairs (their paths are the same in every
// state). Live destinations then never meet the old paths of drained ones,
// which would otherwise rule out most moves whose new paths close a cycle
// with some old path; the price is a longer pause for the drained pairs.
//
// In live mode (BuildLive) nothing is paused: a destination not yet
// placed, or left for a later round, contributes all of its old
// dependencies, and the destinations whose pairs the old tables lose are
// placed first (they are the ones a failure made urgent).
func (b *builder) greedy(ctx context.Context) error {
	b.drainFirst = !b.live
	es := b.w.es
	dags := make([]*dag, b.epochs())
	for e := range dags {
		dags[e] = newDAG(es)
	}
	oldC, err := b.oldDeps(ctx, dags)
	if err != nil {
		return err
	}
	for _, d := range dags {
		if err := d.order(); err != nil {
			return fmt.Errorf("plan: old tables: %w: the dependency graph has a cycle", ErrUnsafeTables)
		}
	}
	wk, t := newWalker(b.w), newDestTL(b.g.NumSwitches())
	pl := &placer{dags: dags, oldC: oldC, wk: wk, t: t, cand: make([][]int64, len(dags)),
		in: make([][]int64, len(dags)), out: make([][]int64, len(dags)), done: make([]bool, len(b.infos))}
	for n, i := range b.greedyOrder() {
		if b.strat[i] != InPlace || pl.done[i] {
			continue // unchanged, dark, or placed with a twin
		}
		if n%64 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		placed, why := b.placeFirst(pl, []int{i})
		if !placed {
			// Destinations of one switch share their old paths: each
			// one's old dependencies may block the other's move, which
			// they make together.
			if tw := b.twins(pl, i); len(tw) > 0 {
				placed, _ = b.placeFirst(pl, append([]int{i}, tw...))
			}
		}
		if !placed {
			b.strat[i], b.why[i] = Drained, why // its contribution stays oldC[i]
		}
		oldC[i], pl.done[i] = nil, true
	}
	return nil
}

// placer is the greedy's state: the epochs' graphs, the old dependencies
// of the destinations not placed yet, and scratch.
type placer struct {
	dags          []*dag
	oldC          [][]int64
	wk            *walker
	t             *destTL
	cand, in, out [][]int64
	buf           []int64
	done          []bool          // per info: placed or drained
	bySwitch      map[int32][]int // infos by the switch that delivers them (twins)
}

// placeFirst moves the destinations ms together on the first of their
// candidates (those of ms[0]) that keeps every epoch's graph acyclic and
// reports whether one did; why names the first cycle found.
func (b *builder) placeFirst(pl *placer, ms []int) (placed bool, why string) {
	for _, c := range b.candidates(&b.infos[ms[0]]) {
		ok, w := b.accept(pl, ms, c)
		if why == "" {
			why = w
		}
		if ok {
			for _, i := range ms {
				b.strat[i] = c.strat
				if c.strat == FreshSL {
					b.freshSL[i] = int8(c.sl)
				}
				pl.oldC[i], pl.done[i] = nil, true
			}
			return true, why
		}
	}
	return false, why
}

// accept swaps the old dependencies of the destinations ms for their
// dependencies under candidate c in every epoch's graph, or leaves the
// graphs as they were and says why (empty when c needs VLs beyond the
// limit).
func (b *builder) accept(pl *placer, ms []int, c candidate) (bool, string) {
	for e := range pl.dags {
		pl.in[e], pl.out[e] = pl.in[e][:0], pl.out[e][:0]
	}
	for _, i := range ms {
		if !b.contrib(pl.wk, pl.t, &b.infos[i], c, pl.cand, &pl.buf) {
			return false, ""
		}
		for e := range pl.dags {
			pl.in[e] = append(pl.in[e], pl.cand[e]...)
			pl.out[e] = append(pl.out[e], pl.oldC[i]...)
		}
	}
	for e, d := range pl.dags {
		if !d.replace(pl.out[e], pl.in[e]) {
			why := fmt.Sprintf("%s closes a dependency cycle in epoch %d: %s", c, e+1, shortCycle(b.w.es, d.cycle))
			for k := e - 1; k >= 0; k-- {
				if !pl.dags[k].replace(pl.in[k], pl.out[k]) {
					panic("plan: undoing an accepted upgrade closed a cycle")
				}
			}
			return false, why
		}
	}
	return true, ""
}

// twins lists the destinations not placed yet that lead to the same
// switch as i with the same SLs, changed switches and levels (the LIDs of
// one switch: its own and its CAs'), with per-destination SLs.
func (b *builder) twins(pl *placer, i int) []int {
	if b.old.SL.BySrc != nil || b.new.SL.BySrc != nil || b.infos[i].perTerm {
		return nil
	}
	if pl.bySwitch == nil {
		pl.bySwitch = map[int32][]int{}
		for j := range b.infos {
			sw := b.destSwitch(b.infos[j].d)
			pl.bySwitch[sw] = append(pl.bySwitch[sw], j)
		}
	}
	in := &b.infos[i]
	var out []int
	for _, j := range pl.bySwitch[b.destSwitch(in.d)] {
		o := &b.infos[j]
		if j == i || pl.done[j] || b.strat[j] != InPlace || o.perTerm ||
			slAt(b.old.SL.ByDest, int(o.d)) != slAt(b.old.SL.ByDest, int(in.d)) ||
			slAt(b.new.SL.ByDest, int(o.d)) != slAt(b.new.SL.ByDest, int(in.d)) ||
			!slices.Equal(o.changed, in.changed) || !slices.Equal(o.level, in.level) {
			continue
		}
		out = append(out, j)
	}
	return out
}

// destSwitch is the switch that delivers LID d.
func (b *builder) destSwitch(d int32) int32 {
	sw, term := b.g.Owner(int(d))
	if term >= 0 {
		sw = b.g.Terms[term].Switch
	}
	return sw
}

// greedyOrder is the order destinations are placed in: by LID, in live
// mode those that lose pairs first.
func (b *builder) greedyOrder() []int {
	order := make([]int, 0, len(b.infos))
	for i := range b.infos {
		if !b.live || b.infos[i].lostPairs > 0 {
			order = append(order, i)
		}
	}
	if b.live {
		for i := range b.infos {
			if b.infos[i].lostPairs == 0 {
				order = append(order, i)
			}
		}
	}
	return order
}

// oldDeps counts the old dependencies of every destination (of the
// unchanged pairs only for those that may move, unless live) into each epoch's DAG, in
// batches, and returns those of the destinations that may move.
func (b *builder) oldDeps(ctx context.Context, dags []*dag) ([][]int64, error) {
	oldC := make([][]int64, len(b.infos))
	wks := make([]*walker, b.opt.Workers)
	tls := make([]*destTL, b.opt.Workers)
	bufs := make([][]int64, b.opt.Workers)
	const batch = 256
	for lo := 0; lo < len(b.infos); lo += batch {
		hi := min(lo+batch, len(b.infos))
		part := make([][]int64, hi-lo)
		if err := parallel.For(ctx, hi-lo, b.opt.Workers, func(w, i int) error {
			if wks[w] == nil {
				wks[w], tls[w] = newWalker(b.w), newDestTL(b.g.NumSwitches())
			}
			in := &b.infos[lo+i]
			t := tls[w]
			t.reset(b.w, int(in.d))
			t.addSeeds(b.w, in.perTerm, false, nil)
			if b.strat[lo+i] == InPlace && !b.live {
				keepUnchanged(t, in.changedSrc)
			}
			part[i] = b.collect(wks[w], t, 1, 1, &bufs[w])
			return nil
		}); err != nil {
			return nil, err
		}
		for i, c := range part {
			for _, e := range c {
				for k := range dags {
					dags[k].cnt[e]++
				}
			}
			if b.strat[lo+i] == InPlace {
				oldC[lo+i] = c
			}
		}
	}
	return oldC, nil
}

// keepUnchanged drops the seeds of the source switches in changed (sorted),
// whose pairs a drain phase would pause.
func keepUnchanged(t *destTL, changed []int32) {
	out := t.seeds[:0]
	for _, s := range t.seeds {
		if _, found := slices.BinarySearch(changed, s.u); !found {
			out = append(out, s)
		}
	}
	t.seeds = out
}

// candidate is one way to move a destination live.
type candidate struct {
	strat Strategy
	sl    uint8 // FreshSL's transition SL
}

func (c candidate) String() string {
	if c.strat == FreshSL {
		return fmt.Sprintf("fresh SL %d", c.sl)
	}
	return c.strat.String()
}

// candidates lists the live strategies for in, cheapest first: in place
// (or the SL switched after or before the writes), then each fresh SL,
// VLs no routing uses first.
func (b *builder) candidates(in *destInfo) []candidate {
	var out []candidate
	switch {
	case in.slChanged && b.slFirst:
		out = append(out, candidate{strat: SLFirst}, candidate{strat: SLLast})
	case in.slChanged:
		out = append(out, candidate{strat: SLLast}, candidate{strat: SLFirst})
	default:
		out = append(out, candidate{strat: InPlace})
	}
	if b.w.es.cross || in.perTerm {
		return out // transition SLs need one VL per SL everywhere and per-destination SL records
	}
	d := int(in.d)
	mine := map[uint8]bool{}
	for u := int32(0); int(u) < b.g.NumSwitches(); u++ {
		mine[b.old.SL.Of(u, 0, d)], mine[b.new.SL.Of(u, 0, d)] = true, true
	}
	used := b.usedVLs()
	seenVL := map[uint8]bool{}
	var free, busy []candidate
	for sl := uint8(0); sl < 15; sl++ {
		vl := b.old.SL2VL.Default[sl]
		if mine[sl] || seenVL[vl] || int(vl) >= b.opt.MaxVLs {
			continue
		}
		seenVL[vl] = true
		c := candidate{strat: FreshSL, sl: sl}
		if used[vl] {
			busy = append(busy, c)
		} else {
			free = append(free, c)
		}
	}
	return append(append(out, free...), busy...)
}

// usedVLs marks the VLs the SLs of either routing map to.
func (b *builder) usedVLs() [16]bool {
	var used [16]bool
	for _, r := range [...]*[]uint8{&b.old.SL.ByDest, &b.new.SL.ByDest, &b.old.SL.BySrc, &b.new.SL.BySrc} {
		for _, sl := range *r {
			used[b.old.SL2VL.Default[sl&15]&15] = true
		}
	}
	return used
}

// contrib computes destination in's dependencies in each epoch (out,
// one slice per epoch) under candidate c. It returns false when c needs
// VLs beyond the limit.
func (b *builder) contrib(wk *walker, t *destTL, in *destInfo, c candidate, out [][]int64, buf *[]int64) bool {
	d := int(in.d)
	t.reset(b.w, d)
	L := max(in.maxLevel, 1)
	wins := []window{{1, 1}, {2, L + 1}, {L + 2, L + 2}}
	if b.opt.levelBarriers {
		// Every level in its own epoch; after the destination's last
		// level its tables are new until the SL switch after all levels.
		L = max(b.levels, 1)
		wins = wins[:1]
		for l := int32(1); l <= L; l++ {
			wins = append(wins, window{1 + l, 1 + l})
		}
		wins = append(wins, window{L + 2, L + 2})
	}
	for j, x := range in.changed {
		if in.level[j] > 0 {
			t.wstep[x], t.wval[x] = 1+in.level[j], b.new.Port(x, d)
		}
	}
	t.addSeeds(b.w, in.perTerm, false, nil)
	for i := range t.seeds {
		s := &t.seeds[i]
		slNew := b.new.SL.Of(s.u, s.slid, d)
		mix := s.sl0
		switch c.strat {
		case SLFirst:
			mix = slNew
		case FreshSL:
			mix = c.sl
		}
		s.ev = s.ev[:0]
		if mix != s.sl0 {
			s.ev = append(s.ev, slEvent{step: 1, sl: mix})
		}
		if slNew != mix {
			s.ev = append(s.ev, slEvent{step: L + 2, sl: slNew})
		}
	}
	wk.vlMax = 0
	for e, win := range wins {
		out[e] = append(out[e][:0], b.collect(wk, t, win.lo, win.hi, buf)...)
	}
	return int(wk.vlMax) < b.opt.MaxVLs
}

// collect walks t's seeds in window [lo, hi] and returns the distinct
// dependencies (a fresh slice; buf is scratch).
func (b *builder) collect(wk *walker, t *destTL, lo, hi int32, buf *[]int64) []int64 {
	*buf = (*buf)[:0]
	wk.emit = func(e int64) { *buf = append(*buf, e) }
	wk.strict = false
	wk.walk(t, nil, lo, hi)
	wk.emit = nil
	slices.Sort(*buf)
	return slices.Clone(slices.Compact(*buf))
}

// shortCycle names the first channels of a cycle.
func shortCycle(es *edgeSpace, verts []int32) string {
	ce := es.cycleError(verts)
	names := ce.Names
	if len(names) > 4 {
		names = append(names[:4:4], fmt.Sprintf("… (%d channels)", len(ce.Names)))
	}
	return strings.Join(names, " => ")
}
