package nue

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// tuning holds what tests vary; routings use defaultTuning. A value, not
// package state, so that tests can run side by side.
type tuning struct {
	// w0 replaces the initial channel weight when > 0: a weight load can
	// outweigh, so that the sweep must give up.
	w0 int64
	// noSweep leaves every search to the Dijkstra (tests compare the
	// two).
	noSweep bool
	// relaxWide makes relax take its general path even for one-word
	// masks.
	relaxWide bool
	// After sweepProbe attempts, a run stops sweeping once more than one
	// in sweepGiveUp of its sweeps stopped short (see trySweep). Only
	// speed depends on them.
	sweepProbe, sweepGiveUp int
	// maxLevelBytes bounds the level rows the layers share (see
	// newLevelRows).
	maxLevelBytes int64
}

func defaultTuning() tuning {
	return tuning{sweepProbe: 8, sweepGiveUp: 4, maxLevelBytes: 256 << 20}
}

// run is one routing of Algorithm 4.1 over the given layers: what Route
// settled before the layers are set up.
type run struct {
	g     *fabric.Graph
	opt   routing.Options
	parts [][]dest // per layer (none empty), in routing order
	n     int64    // LIDs routed
	jobOf []int32  // SAR: per terminal, its job or -1; nil without SAR
	how   Partition
	sched Schedule
	share Share
	tune  tuning
	// hist, if not nil, carries the load of the previous pass
	// (refine.go).
	hist *history
}

// sources is what the layers know of the sources of paths.
type sources struct {
	comp    []int32   // switch -> component label
	own     []int64   // terminal ports per switch: its load on a path
	src     []bool    // switches with terminals: where packets enter
	compSrc []int32   // per component label: its source switches
	jobOwn  [][]int64 // SAR: per job, its terminal ports per switch × unit
	unit    int64     // weight of one all-terminal path
}

// once runs Algorithm 4.1 over the layers. Unless conservative is set, a
// layer's escape paths cover only the switches of its terminal LIDs, so
// that switch LIDs (routed last in each layer) do not restrict the
// terminal routes; a switch LID that then needs the escape paths adds
// their turns under a cycle check, and ok is false if that fails.
func (rn *run) once(ctx context.Context, conservative bool) (*lft.Routing, *Stats, bool, error) {
	g := rn.g
	r := lft.New(g, "nue")
	st := &Stats{Partition: rn.how, Schedule: rn.sched, Share: rn.share}
	if len(rn.parts) == 0 {
		return r, st, true, nil
	}
	sc := rn.sources()
	w, w0 := rn.weights(sc.unit)
	rn.hist.start(w)
	// Switch LIDs' searches (no load) charge a new turn two hops (see
	// layer.newTurn).
	newTurn := 2 * w0
	radix := rn.radixFits(sc, w0+newTurn)
	layers := rn.layers(sc, w, conservative)
	swc := [2]*sweepCount{{}, {}}
	var shared *radixHeap
	for _, l := range layers {
		l.sweepCount = swc
		l.newTurnCost = newTurn
		switch {
		case !radix:
			l.nh = newNodeHeap(g.NumSwitches())
		case rn.opt.Workers == 1:
			// One goroutine searches for every layer, one search at a
			// time, and each search starts with an empty queue: one
			// queue serves them all.
			if shared == nil {
				shared = newRadixHeap(g.NumSwitches())
			}
			l.rh = shared
		default:
			l.rh = newRadixHeap(g.NumSwitches())
		}
	}
	// Indirect networks: nearly every search is a sweep (fat tree k=12:
	// all terminal LIDs), so build the rows ahead of the searches, on the
	// core the terminal LIDs' sequential searches leave idle. Direct ones
	// mostly give up on it (tori): on demand.
	if rows := layers[0].rows; rows != nil && rn.how != Locality && rn.opt.Workers > 1 {
		defer rows.warmBehind(rowOrder(rn.parts, g.NumSwitches()))()
	}
	rd := &rounds{run: rn, layers: layers, w: w, w0: w0, r: r}
	ok, err := rd.all(ctx)
	if err != nil || !ok {
		return nil, nil, ok, err
	}
	r.NumVLs = len(layers)
	for _, l := range layers {
		l.stats.UsedTurns = l.ut.used
		l.stats.BlockedTurns = l.ut.blocked
		st.Layers = append(st.Layers, l.stats)
	}
	return r, st, true, nil
}

// sources counts the sources of paths per switch and component.
func (rn *run) sources() *sources {
	g := rn.g
	S := g.NumSwitches()
	sc := &sources{comp: g.SwitchComponents(), own: make([]int64, S), src: make([]bool, S), compSrc: make([]int32, S), unit: 1}
	// A switch's load on its paths is the number of terminal ports that
	// inject there (the sources of the paths), not its LIDs.
	for _, t := range g.Terms {
		if t.Switch >= 0 {
			sc.src[t.Switch] = true
			sc.own[t.Switch]++
		}
	}
	// SAR (seed 001 §3): balance intra-job paths first. A destination
	// inside a job loads a channel by its job's terminals times big, plus
	// all terminals; any other terminal destination by all terminals. big
	// exceeds every possible all-terminal load (terminals × LIDs), so the
	// job load decides and the whole traffic only breaks its ties. Counting
	// job paths alone left the rest to chance: on a k=12 fat tree both the
	// jobs' effective EFI (5-13 % worse than plain Nue, which is at the
	// bound there) and the max EFI of the rest (30× worse) suffered.
	if rn.jobOf != nil {
		sc.unit = int64(len(g.Terms))*rn.n + 1
		sc.jobOwn = make([][]int64, len(rn.opt.Jobs))
		for j := range sc.jobOwn {
			sc.jobOwn[j] = slices.Clone(sc.own)
		}
		for ti, t := range g.Terms {
			if j := rn.jobOf[ti]; j >= 0 && t.Switch >= 0 {
				sc.jobOwn[j][t.Switch] += sc.unit
			}
		}
	}
	for v, c := range sc.comp {
		if sc.src[v] {
			sc.compSrc[c]++
		}
	}
	return sc
}

// weights returns the initial channel weights: (number of LIDs)² (times
// SAR's job unit) makes path length dominate load.
func (rn *run) weights(unit int64) ([]int64, int64) {
	w0 := rn.n * rn.n * unit
	if rn.tune.w0 > 0 {
		w0 = rn.tune.w0
	}
	w := make([]int64, rn.g.NumChannels())
	for c := range w {
		w[c] = w0
	}
	return w, w0
}

// radixFits reports whether every search key fits the radix heap: every
// destination adds at most (all sources' load) × (its LIDs) to a channel,
// and a key sums at most S channels, each with at most extra (the initial
// weight and a new turn's charge) on top.
func (rn *run) radixFits(sc *sources, extra int64) bool {
	S := rn.g.NumSwitches()
	var load uint64
	for _, o := range sc.own {
		load += uint64(o)
	}
	hi1, perDest := bits.Mul64(load, uint64(sc.unit)+1)
	hi2, total := bits.Mul64(perDest, uint64(rn.n))
	maxW := total + uint64(extra)
	hi3, maxKey := bits.Mul64(maxW, uint64(S))
	return hi1 == 0 && hi2 == 0 && maxW >= total && hi3 == 0 && radixFits(S, maxKey)
}

// layers sets the layers up (Algorithm 4.1, lines 3–6): roots, escape
// trees and their turns, the sharing of searches.
func (rn *run) layers(sc *sources, w []int64, conservative bool) []*layer {
	g, parts := rn.g, rn.parts
	S := g.NumSwitches()
	ti := newTurnIndex(g)
	seq := seedSeq(g, sourceLevels(g, sc.src))
	covers := make([][]dest, len(parts))
	for i, lds := range parts {
		covers[i] = lds
		if !conservative {
			covers[i] = termDests(lds)
		}
	}
	var rows *levelRows
	if ti.hs != nil && !rn.tune.noSweep {
		rows = newLevelRows(g, rn.tune.maxLevelBytes)
	}
	// Indirect networks sweep nearly every search, so the sources' rows
	// serve the roots' betweenness first; direct ones mostly give up on
	// the sweep (tori), where the rows would be built for the roots alone.
	rootRows := rows
	if rn.how == Locality {
		rootRows = nil
	}
	allRoots := centralRoots(g, covers, sc.comp, rn.opt.Workers, rootRows)
	// Escape trees are built layer after layer; each tree's channels get
	// a small tie-breaking bump so the next layer's tree prefers others
	// among equal-length choices.
	tie := append([]int64(nil), w...)
	parents := make([][]int32, len(parts))
	nh := newNodeHeap(S)
	for i := range parts {
		parents[i] = escapeTree(g, allRoots[i], sc.comp, tie, nh)
		for _, p := range parents[i] {
			if p >= 0 {
				tie[p]++
			}
		}
	}
	var scratch *switchScratch
	if rn.opt.Workers == 1 && rn.sched == Sequential {
		scratch = newSwitchScratch(S) // see switchScratch
	}
	// The rest of a layer's set-up is its own: on all workers.
	layers := make([]*layer, len(parts))
	_ = parallel.For(context.Background(), len(parts), rn.opt.Workers, func(_, i int) error {
		lds := parts[i]
		l := newLayer(i, g, ti, seq, sc, lds, scratch)
		l.tune = &rn.tune
		l.rows = rows
		l.usedFirst = rn.how != RoundRobin
		switch rn.share {
		case ShareSwitch:
			l.dests = groupBySwitch(lds, true)
		case ShareSwitchLID:
			l.dests = groupBySwitch(lds, false)
		}
		covered, roots := covers[i], allRoots[i]
		l.escapeAll = len(covered) == len(lds)
		l.parent = parents[i]
		l.stats.EscapeTurns = markEscape(g, l.ut, l.parent, covered, sc.src)
		l.ut.used = l.stats.EscapeTurns
		for v := int32(0); int(v) < S; v++ {
			if roots[sc.comp[v]] == v {
				l.stats.Root = g.SwitchName(v)
				break
			}
		}
		layers[i] = l
		return nil
	})
	return layers
}

// rounds routes the layers' destinations (see schedule) into r under the
// shared channel weights w.
type rounds struct {
	*run
	layers []*layer
	w      []int64
	w0     int64
	r      *lft.Routing
	wmax   int64 // the heaviest channel, for the sweep
	// progress: destinations routed and in all
	done, total int
}

// all routes the layers step by step (see schedule). The destinations of
// a step are routed against the weights left by the steps before it, in
// parallel when there are workers; then their increments are added in
// step order. Switch LIDs add no balancing load: they carry next to no
// data. Under the sequential schedule they are routed last, layer by
// layer (switchLIDs). With a history (refine.go) a destination's load of
// the previous pass leaves the weights before its search, and no search
// puts its load on the weights itself: the history sees every increment.
// The result does not depend on the workers.
func (rd *rounds) all(ctx context.Context) (bool, error) {
	steps := schedule(rd.layers, rd.sched)
	var lists [][]dest // the switch LIDs left to switchLIDs
	if rd.sched == Sequential {
		lists = switchLIDLists(rd.layers)
	}
	for _, st := range steps {
		rd.total += len(st)
	}
	for _, ds := range lists {
		rd.total += len(ds)
	}
	rd.wmax = rd.w0
	for _, x := range rd.w {
		rd.wmax = max(rd.wmax, x)
	}
	alone := &stepOut{w: rd.w, wmax: &rd.wmax, r: rd.r}
	if rd.hist != nil {
		alone = nil // the history needs every increment (merge)
	}
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("nue: %w", err)
		}
		for _, sd := range st {
			rd.hist.forget(sd.d.lid, rd.w)
			rd.layers[sd.layer].w0, rd.layers[sd.layer].span = rd.w0, rd.wmax-rd.w0
		}
		if len(st) == 1 {
			// Alone in its step: the search may put its results in place.
			if !rd.layers[st[0].layer].route(*st[0].d, rd.w, alone) {
				return false, nil
			}
		} else if ok, err := rd.parallel(ctx, st); !ok {
			return false, err
		}
		for _, sd := range st {
			rd.merge(sd)
		}
		rd.done += len(st)
		if rd.opt.Progress != nil && (rd.done == rd.total || rd.done%64 < len(st)) {
			rd.opt.Progress(rd.done, rd.total)
		}
	}
	if lists != nil {
		if ok, err := rd.switchLIDs(ctx, lists); !ok || err != nil {
			return ok, err
		}
	}
	rd.hist.finish(rd.w)
	return true, nil
}

// parallel routes the destinations of one step against the same weights,
// on up to Workers goroutines; false as layer.route.
func (rd *rounds) parallel(ctx context.Context, st step) (bool, error) {
	err := parallel.For(ctx, len(st), rd.opt.Workers, func(_, j int) error {
		if !rd.layers[st[j].layer].route(*st[j].d, rd.w, nil) {
			return errNoTree
		}
		return nil
	})
	switch {
	case errors.Is(err, errNoTree):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("nue: %w", err)
	}
	return true, nil
}

// errNoTree stops a step whose search finds no deadlock-free tree.
var errNoTree = errors.New("nue: no deadlock-free tree")

// merge writes a routed destination's tables and adds its increments to
// the weights (terminal LIDs only), unless its search did so itself.
func (rd *rounds) merge(sd stepDest) {
	l := rd.layers[sd.layer]
	if l.written {
		l.written = false
		return
	}
	l.write(*sd.d, rd.r)
	if sd.d.phase < 2 { // terminal LIDs (with SAR: in jobs, then the rest)
		for _, e := range l.inc {
			rd.w[e.c] += e.v
			rd.wmax = max(rd.wmax, rd.w[e.c])
		}
		rd.hist.record(sd.d.lid, l.inc)
	}
	l.inc = l.inc[:0]
}

// switchLIDLists returns, per layer, its switch LIDs (phase 2).
func switchLIDLists(layers []*layer) [][]dest {
	lists := make([][]dest, len(layers))
	for i, l := range layers {
		for j, d := range l.dests {
			if d.phase == 2 {
				lists[i] = l.dests[j:]
				break
			}
		}
	}
	return lists
}

// switchLIDs routes every layer's switch LIDs (phase 2) under the
// sequential schedule, each layer in order on one worker, the layers side
// by side: switch LIDs add no load, so the weights stay as the terminal
// LIDs left them and the layers share nothing they write but the tables,
// where each LID's column is its own. The result is the sequential one
// whatever the workers. A worker waits for nothing but the end.
func (rd *rounds) switchLIDs(ctx context.Context, lists [][]dest) (bool, error) {
	var failed atomic.Bool
	var count atomic.Int64
	count.Store(int64(rd.done))
	err := parallel.For(ctx, len(rd.layers), rd.opt.Workers, func(_, i int) error {
		l := rd.layers[i]
		l.w0, l.span = rd.w0, rd.wmax-rd.w0
		for _, d := range lists[i] {
			if failed.Load() {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if !l.route(d, rd.w, nil) {
				failed.Store(true)
				return nil
			}
			l.write(d, rd.r)
			l.inc = l.inc[:0]
			if n := int(count.Add(1)); rd.opt.Progress != nil && (n == rd.total || n%64 == 0) {
				rd.opt.Progress(n, rd.total)
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("nue: %w", err)
	}
	return !failed.Load(), nil
}

// termDests is the terminal LIDs of lds, or lds when it has none: a
// prefix of lds when they come first (partition's order), else a copy.
func termDests(lds []dest) []dest {
	n, prefix := 0, true
	for i, d := range lds {
		if d.term {
			n++
			prefix = prefix && n == i+1
		}
	}
	switch {
	case n == 0:
		return lds
	case prefix:
		return lds[:n:n]
	}
	terms := make([]dest, 0, n)
	for _, d := range lds {
		if d.term {
			terms = append(terms, d)
		}
	}
	return terms
}
