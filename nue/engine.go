package nue

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// DefaultPartition is the partition used when none is given: Auto.
const DefaultPartition = Auto

// Engine is the Nue routing engine ("nue"), configured by Config
// ("nue:partition=locality:share=none"; see Params).
type Engine struct{ Config Config }

func init() {
	routing.Register("nue", func() routing.Engine { return Engine{} })
}

// Name returns "nue".
func (Engine) Name() string { return "nue" }

// DeadlockFree reports true: every layer's CDG is acyclic by construction.
func (Engine) DeadlockFree() bool { return true }

// Route computes a Nue routing; see RouteStats.
func (e Engine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	r, _, err := e.RouteStats(ctx, g, opt)
	return r, err
}

// Stats describe a Nue run, layer by layer.
type Stats struct {
	Partition Partition
	Schedule  Schedule
	Share     Share
	// Conservative is set when a switch LID could not be given escape
	// paths late and the routing was redone with escape paths covering
	// every switch LID from the start.
	Conservative bool
	Layers       []LayerStats
}

// Route computes a Nue routing of g with the default Config; see
// Engine.RouteStats.
func Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, *Stats, error) {
	return Engine{}.RouteStats(ctx, g, opt)
}

// RouteStats computes a Nue routing of g with up to opt.MaxVLs virtual
// layers and returns per-layer statistics. The result is deterministic
// and does not depend on opt.Workers.
func (e Engine) RouteStats(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, *Stats, error) {
	return e.routeStats(ctx, g, opt, 1)
}

// routeStats is RouteStats with passes−1 refinement passes (refine.go).
func (e Engine) routeStats(ctx context.Context, g *fabric.Graph, opt routing.Options, passes int) (*lft.Routing, *Stats, error) {
	if err := opt.Validate(); err != nil {
		return nil, nil, err
	}
	if err := e.Config.Validate(); err != nil {
		return nil, nil, err
	}
	opt = opt.WithDefaults()
	cfg := e.Config.withDefaults()
	how, sched, share := cfg.Partition, cfg.Schedule, cfg.Share
	if how == Auto {
		how = autoPartition(g)
	}
	var jobOf []int32
	if opt.SAR && len(opt.Jobs) > 0 {
		jobOf = routing.JobOf(opt.Jobs, len(g.Terms))
	}
	if share == ShareAuto {
		share = autoShare(g, jobOf != nil)
	}
	ds, err := destinations(g, jobOf)
	if err != nil {
		return nil, nil, err
	}
	parts, err := partition(g, ds, opt.MaxVLs, how)
	if err != nil {
		return nil, nil, err
	}
	var nonEmpty [][]dest
	for _, p := range parts {
		if len(p) > 0 {
			nonEmpty = append(nonEmpty, p)
		}
	}
	if len(nonEmpty) == 0 {
		return lft.New(g, "nue"), &Stats{Partition: how, Schedule: sched, Share: share}, nil
	}
	return refine(passes, &opt, g.MaxLID(), func(h *history) (*lft.Routing, *Stats, error) {
		r, st, ok, err := routeOnce(ctx, g, opt, nonEmpty, ds, jobOf, how, sched, share, false, h)
		if err == nil && !ok {
			// A switch LID could not fall back on escape paths added late:
			// route again with escape paths covering switch LIDs from the start.
			r, st, _, err = routeOnce(ctx, g, opt, nonEmpty, ds, jobOf, how, sched, share, true, h)
			if err == nil {
				st.Conservative = true
			}
		}
		return r, st, err
	})
}

// routeOnce runs Algorithm 4.1 over the given layers. Unless conservative
// is set, a layer's escape paths cover only the switches of its terminal
// LIDs, so that switch LIDs (routed last in each layer) do not restrict
// the terminal routes; a switch LID that then needs the escape paths adds
// their turns under a cycle check, and ok is false if that fails.
//
// h, if not nil, carries the weights of the previous pass (refine.go).
func routeOnce(ctx context.Context, g *fabric.Graph, opt routing.Options, parts [][]dest, ds []dest, jobOf []int32, how Partition, sched Schedule, share Share, conservative bool, h *history) (*lft.Routing, *Stats, bool, error) {
	r := lft.New(g, "nue")
	st := &Stats{Partition: how, Schedule: sched, Share: share}
	if len(parts) == 0 {
		return r, st, true, nil
	}
	S, C := g.NumSwitches(), g.NumChannels()
	comp := g.SwitchComponents()
	// A switch's load on its paths is the number of terminal ports that
	// inject there (the sources of the paths), not its LIDs.
	own := make([]int64, S)
	src := make([]bool, S) // switches with terminals: where packets enter
	for _, t := range g.Terms {
		if t.Switch >= 0 {
			src[t.Switch] = true
			own[t.Switch]++
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
	n := int64(len(ds))
	unit := int64(1) // weight of one all-terminal path relative to the initial weight
	var jobOwn [][]int64
	if jobOf != nil {
		unit = int64(len(g.Terms))*n + 1
		jobOwn = make([][]int64, len(opt.Jobs))
		for j := range jobOwn {
			jobOwn[j] = slices.Clone(own)
		}
		for ti, t := range g.Terms {
			if j := jobOf[ti]; j >= 0 && t.Switch >= 0 {
				jobOwn[j][t.Switch] += unit
			}
		}
	}
	compSrc := make([]int32, S)
	for v, c := range comp {
		if src[v] {
			compSrc[c]++
		}
	}
	// Initial weight (number of LIDs)² (times SAR's job unit) makes path
	// length dominate load.
	w := make([]int64, C)
	w0 := n * n * unit
	if testW0 > 0 {
		w0 = testW0
	}
	for c := range w {
		w[c] = w0
	}
	h.start(w)
	// A bound on any search key, for the radix heap: every destination
	// adds at most (all sources' load) × (its LIDs) to a channel, and a
	// key sums at most S channels.
	radix := false
	{
		var load uint64
		for _, o := range own {
			load += uint64(o)
		}
		hi1, perDest := bits.Mul64(load, uint64(unit)+1)
		hi2, total := bits.Mul64(perDest, uint64(n))
		maxW := total + uint64(w0)
		hi3, maxKey := bits.Mul64(maxW, uint64(S))
		radix = hi1 == 0 && hi2 == 0 && maxW >= total && hi3 == 0 && radixFits(S, maxKey)
	}
	ti := newTurnIndex(g)
	seq := seedSeq(g, sourceLevels(g, src))
	layers := make([]*layer, len(parts))
	// Escape trees are built layer after layer; each tree's channels get
	// a small tie-breaking bump so the next layer's tree prefers others
	// among equal-length choices.
	tie := append([]int64(nil), w...)
	covers := make([][]dest, len(parts))
	for i, lds := range parts {
		covers[i] = lds
		if !conservative {
			var terms []dest
			for _, d := range lds {
				if d.term {
					terms = append(terms, d)
				}
			}
			if len(terms) > 0 {
				covers[i] = terms
			}
		}
	}
	allRoots := centralRoots(g, covers, comp, opt.Workers)
	var rows *levelRows
	if ti.hs != nil && !noSweep {
		rows = newLevelRows(g)
	}
	parents := make([][]int32, len(parts))
	nh := newNodeHeap(S)
	for i := range parts {
		parents[i] = escapeTree(g, allRoots[i], comp, tie, nh)
		for _, p := range parents[i] {
			if p >= 0 {
				tie[p]++
			}
		}
	}
	// The rest of a layer's set-up is its own: on all workers.
	_ = parallel.For(context.Background(), len(parts), opt.Workers, func(_, i int) error {
		lds := parts[i]
		l := newLayer(i, g, ti, seq, comp, compSrc, own, src, lds)
		l.jobOwn = jobOwn
		l.rows = rows
		if radix {
			l.rh = newRadixHeap(S)
		}
		switch share {
		case ShareSwitch:
			l.dests = groupBySwitch(lds, true)
		case ShareSwitchLID:
			l.dests = groupBySwitch(lds, false)
		}
		covered, roots := covers[i], allRoots[i]
		l.escapeAll = len(covered) == len(lds)
		l.parent = parents[i]
		l.stats.EscapeTurns = markEscape(g, l.ut, l.parent, covered, src)
		l.ut.used = l.stats.EscapeTurns
		for v := int32(0); int(v) < S; v++ {
			if roots[comp[v]] == v {
				l.stats.Root = g.SwitchName(v)
				break
			}
		}
		layers[i] = l
		return nil
	})
	// Indirect networks: nearly every search is a sweep (fat tree k=12:
	// all terminal LIDs), so build the rows ahead of the searches, on the
	// core the terminal LIDs' sequential searches leave idle. Direct ones
	// mostly give up on it (tori): on demand.
	if rows != nil && how != Locality && opt.Workers > 1 {
		defer rows.warmBehind(rowOrder(parts, S))()
	}
	ok, err := runRounds(ctx, layers, w, w0, r, opt, sched, h)
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

// errNoTree stops a step whose search finds no deadlock-free tree.
var errNoTree = errors.New("nue: no deadlock-free tree")

// testW0 replaces the initial channel weight when set (tests: a weight
// that load can outweigh, so that the sweep must give up).
var testW0 int64

// Share says which destinations share one search.
type Share string

// Shares.
const (
	ShareNone   Share = "none"   // every LID is searched on its own
	ShareSwitch Share = "switch" // see groupBySwitch
	// ShareSwitchLID searches every terminal LID on its own; a switch's
	// own LID shares the search of the first terminal LID of its switch in
	// its layer, if any (see groupBySwitch).
	ShareSwitchLID Share = "switchlid"
	// ShareAuto is ShareSwitch in direct networks (every switch has
	// terminals) without SAR jobs, else ShareSwitchLID; see autoShare.
	ShareAuto Share = "auto"
)

// DefaultShare is the sharing used when none is given.
const DefaultShare = ShareAuto

// autoShare picks ShareSwitch for direct networks and ShareNone for
// indirect ones (nue/README.md, "Shared searches"). In an indirect network
// a destination's tree sends every source through its cheapest down-link
// into the destination's leaf, so the CAs of a leaf need trees of their
// own to spread over its down-links: sharing took the max EFI of the k=12
// fat tree from 1,716 to 20,592 (switches partition). In direct networks
// the paths spread over the fabric anyway, and one tree per switch also
// puts fewer turns in use, leaving more freedom to later destinations:
// torus 8×8×8 with 4 CAs per switch, k=8: max EFI 26,384 instead of 34,584
// in 0.13 s instead of 0.27 s. With SAR jobs the trees are not shared:
// SAR balances each job's paths, and one tree for a switch's CAs of a job
// coarsens that (torus 6×6, 4 CAs per switch: effective job EFI 50
// instead of 38). A switch's own LID adds no load, so in all other cases
// it takes the tree of a terminal LID of its switch: a search saved, and
// no new turn (k=12 fat tree: 144 of the 432 switch LIDs' searches).
func autoShare(g *fabric.Graph, jobs bool) Share {
	if !jobs && autoPartition(g) == Locality {
		return ShareSwitch
	}
	return ShareSwitchLID
}

// Schedule says how layers share the channel weights.
type Schedule string

// Schedules.
const (
	// LockStep routes one destination of every layer per round, in
	// parallel, against the weights of the previous round; each layer
	// starts at a different point of its destination list so that one
	// round's destinations are far apart.
	LockStep Schedule = "lockstep"
	// Sequential routes one destination at a time, layers taking turns,
	// each against the weights of all destinations routed before it.
	Sequential Schedule = "sequential"
)

// DefaultSchedule is the schedule used when none is given. Measured
// (nue/README.md): lock step loses balance wherever a round's
// destinations share sources' up-links (a 3-level fat tree k=8: max EFI
// 888 against the optimum 504 of Sequential), and its speed-up is at most
// the number of cores, so Sequential is the default.
const DefaultSchedule = Sequential

// step is one unit of the schedule: destinations of distinct layers that
// are routed against the same weights (possibly in parallel); their
// increments are added in order afterwards.
type step []stepDest

type stepDest struct {
	layer int
	d     dest
}

// schedule lists the steps of a run, phase by phase (see dest.phase): all
// terminal LIDs first (with SAR those inside jobs, then the others),
// switch LIDs last. In round i of a phase every layer routes its i-th
// destination of the phase.
//   - Sequential: one destination per step, layers taking turns.
//   - LockStep: one round per step.
func schedule(layers []*layer, sched Schedule) []step {
	k := len(layers)
	phases := make([][][]dest, 3) // per phase, per layer
	for p := range phases {
		phases[p] = make([][]dest, k)
	}
	for j, l := range layers {
		for i := 0; i < len(l.dests); {
			e := i
			for e < len(l.dests) && l.dests[e].phase == l.dests[i].phase {
				e++
			}
			phases[l.dests[i].phase][j] = l.dests[i:e]
			i = e
		}
	}
	var steps []step
	for p, ph := range phases {
		rounds := 0
		for _, ds := range ph {
			rounds = max(rounds, len(ds))
		}
		at := func(j, i int) (stepDest, bool) {
			if i < len(ph[j]) {
				return stepDest{layer: j, d: ph[j][i]}, true
			}
			return stepDest{}, false
		}
		switch {
		case p == 2 && sched == Sequential:
			// Switch LIDs add no load, so the weights no longer change
			// and the layers are independent: one round per step gives
			// the sequential result, in parallel.
			for i := 0; i < rounds; i++ {
				var st step
				for j := range ph {
					if a, ok := at(j, i); ok {
						st = append(st, a)
					}
				}
				steps = append(steps, st)
			}
		case sched == LockStep:
			// Rotate each layer's list so one round's destinations
			// spread over the fabric (consecutive LIDs tend to share a
			// switch).
			for i := 0; i < rounds; i++ {
				var st step
				for j, ds := range ph {
					if n := len(ds); i < n {
						st = append(st, stepDest{layer: j, d: ds[(i+j*n/k)%n]})
					}
				}
				steps = append(steps, st)
			}
		default:
			for i := 0; i < rounds; i++ {
				for j := range ph {
					if a, ok := at(j, i); ok {
						steps = append(steps, step{a})
					}
				}
			}
		}
	}
	return steps
}

// runRounds routes the layers step by step (see schedule). The
// destinations of a step are routed against the weights left by the steps
// before it, in parallel when there are workers; then their increments are
// added in step order. Switch LIDs add no balancing load: they carry next
// to no data. With h, a destination's load of the previous pass leaves
// the weights before its search. The result does not depend on the
// workers.
func runRounds(ctx context.Context, layers []*layer, w []int64, w0 int64, r *lft.Routing, opt routing.Options, sched Schedule, h *history) (bool, error) {
	steps := schedule(layers, sched)
	total := 0
	for _, st := range steps {
		total += len(st)
	}
	wmax := w0 // the heaviest channel, for the sweep
	for _, x := range w {
		wmax = max(wmax, x)
	}
	merge := func(sd stepDest) {
		l := layers[sd.layer]
		if l.written {
			l.written = false
			return
		}
		l.write(sd.d, r)
		if sd.d.phase < 2 { // terminal LIDs (with SAR: in jobs, then the rest)
			for _, e := range l.inc {
				w[e.c] += e.v
				wmax = max(wmax, w[e.c])
			}
			h.record(sd.d.lid, l.inc)
		}
		l.inc = l.inc[:0]
	}
	alone := &stepOut{w: w, wmax: &wmax, r: r}
	if h != nil {
		alone = nil // the history needs every increment (l.inc)
	}
	done := 0
	for _, st := range steps {
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("nue: %w", err)
		}
		for _, sd := range st {
			h.forget(sd.d.lid, w)
			layers[sd.layer].w0, layers[sd.layer].span = w0, wmax-w0
		}
		if len(st) == 1 {
			// Alone in its step: the search may put its results in place.
			if !layers[st[0].layer].route(st[0].d, w, alone) {
				return false, nil
			}
		} else if err := parallel.For(ctx, len(st), opt.Workers, func(_, j int) error {
			if !layers[st[j].layer].route(st[j].d, w, nil) {
				return errNoTree
			}
			return nil
		}); errors.Is(err, errNoTree) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("nue: %w", err)
		}
		for _, sd := range st {
			merge(sd)
		}
		done += len(st)
		if opt.Progress != nil && (done == total || done%64 < len(st)) {
			opt.Progress(done, total)
		}
	}
	h.finish(w)
	return true, nil
}
