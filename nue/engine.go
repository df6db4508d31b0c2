package nue

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
)

// DefaultPartition is the partition used when none is given: Auto.
const DefaultPartition = Auto

// Engine is the Nue routing engine ("nue"). Parameters (Options.Params):
// "partition" = auto (default) | roundrobin | locality, and
// "schedule" = sequential (default) | lockstep.
type Engine struct{}

func init() {
	routing.Register("nue", func() routing.Engine { return Engine{} })
}

// Name returns "nue".
func (Engine) Name() string { return "nue" }

// DeadlockFree reports true: every layer's CDG is acyclic by construction.
func (Engine) DeadlockFree() bool { return true }

// Route computes a Nue routing; see Route.
func (Engine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	r, _, err := Route(ctx, g, opt)
	return r, err
}

// Stats describe a Nue run, layer by layer.
type Stats struct {
	Partition Partition
	Schedule  Schedule
	// Conservative is set when a switch LID could not be given escape
	// paths late and the routing was redone with escape paths covering
	// every switch LID from the start.
	Conservative bool
	Layers       []LayerStats
}

// Route computes a Nue routing of g with up to opt.MaxVLs virtual layers
// and returns per-layer statistics. The result is deterministic and does
// not depend on opt.Workers.
func Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, *Stats, error) {
	if err := opt.Validate(); err != nil {
		return nil, nil, err
	}
	if err := opt.CheckParams("nue", "partition", "schedule"); err != nil {
		return nil, nil, err
	}
	opt = opt.WithDefaults()
	how := DefaultPartition
	if p, ok := opt.Param("partition"); ok {
		how = Partition(p)
	}
	if how == Auto {
		how = autoPartition(g)
	}
	sched := DefaultSchedule
	if p, ok := opt.Param("schedule"); ok {
		sched = Schedule(p)
		if sched != LockStep && sched != Sequential {
			return nil, nil, fmt.Errorf("nue: unknown schedule %q, expected %s or %s", p, LockStep, Sequential)
		}
	}
	var jobOf []int32
	if opt.SAR && len(opt.Jobs) > 0 {
		jobOf = routing.JobOf(opt.Jobs, len(g.Terms))
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
		return lft.New(g, "nue"), &Stats{Partition: how, Schedule: sched}, nil
	}
	r, st, ok, err := routeOnce(ctx, g, opt, nonEmpty, ds, jobOf, how, sched, false)
	if err == nil && !ok {
		// A switch LID could not fall back on escape paths added late:
		// route again with escape paths covering switch LIDs from the start.
		r, st, _, err = routeOnce(ctx, g, opt, nonEmpty, ds, jobOf, how, sched, true)
		if err == nil {
			st.Conservative = true
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return r, st, nil
}

// routeOnce runs Algorithm 4.1 over the given layers. Unless conservative
// is set, a layer's escape paths cover only the switches of its terminal
// LIDs, so that switch LIDs (routed last in each layer) do not restrict
// the terminal routes; a switch LID that then needs the escape paths adds
// their turns under a cycle check, and ok is false if that fails.
func routeOnce(ctx context.Context, g *fabric.Graph, opt routing.Options, parts [][]dest, ds []dest, jobOf []int32, how Partition, sched Schedule, conservative bool) (*lft.Routing, *Stats, bool, error) {
	r := lft.New(g, "nue")
	st := &Stats{Partition: how, Schedule: sched}
	if len(parts) == 0 {
		return r, st, true, nil
	}
	S, C := g.NumSwitches(), g.NumChannels()
	comp := components(g)
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
	for c := range w {
		w[c] = n * n * unit
	}
	ti := newTurnIndex(g)
	level := sourceLevels(g, src)
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
	for i, lds := range parts {
		l := newLayer(i, g, ti, comp, compSrc, own, src, lds)
		l.jobOwn = jobOwn
		covered, roots := covers[i], allRoots[i]
		l.escapeAll = len(covered) == len(lds)
		l.parent = escapeTree(g, roots, comp, tie, l.nh)
		l.ut.seedOrder(level)
		markEscape(g, l.ut, l.parent, covered, src)
		l.stats.EscapeTurns = countUsed(l.ut)
		l.ut.used = l.stats.EscapeTurns
		for v := int32(0); int(v) < S; v++ {
			if roots[comp[v]] == v && l.stats.Root == "" {
				l.stats.Root = g.SwitchName(v)
			}
			if p := l.parent[v]; p >= 0 {
				tie[p]++
			}
		}
		layers[i] = l
	}
	ok, err := runRounds(ctx, layers, w, r, opt, sched)
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

func countUsed(ut *usedTurns) int {
	n := 0
	for _, s := range ut.state {
		if s >= tEscape {
			n++
		}
	}
	return n
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

// runRounds routes the layers in rounds: in round i every layer routes one
// destination, phase by phase (see dest.phase): all terminal LIDs first
// (with SAR those inside jobs, then the others), switch LIDs last. Switch
// LIDs add no balancing load: they carry next to no data. With LockStep
// the layers of a round run in parallel against the weights left by the
// previous round and the increments are added in layer order afterwards;
// with Sequential each layer adds its increments before the next routes.
// Either way the result does not depend on the workers.
func runRounds(ctx context.Context, layers []*layer, w []int64, r *lft.Routing, opt routing.Options, sched Schedule) (bool, error) {
	total := 0
	phases := make([][][]dest, 3) // per phase, per layer
	for p := range phases {
		phases[p] = make([][]dest, len(layers))
	}
	for j, l := range layers {
		for i := 0; i < len(l.dests); {
			k := i
			for k < len(l.dests) && l.dests[k].phase == l.dests[i].phase {
				k++
			}
			phases[l.dests[i].phase][j] = l.dests[i:k]
			i = k
		}
		total += len(l.dests)
	}
	if sched == LockStep {
		// Rotate each layer's lists so one round's destinations spread
		// over the fabric (consecutive LIDs tend to share a switch).
		for _, ph := range phases {
			for j, ds := range ph {
				if n := len(ds); n > 1 {
					off := j * n / len(layers)
					ph[j] = append(append([]dest(nil), ds[off:]...), ds[:off]...)
				}
			}
		}
	}
	workers := min(opt.Workers, len(layers))
	if sched == Sequential {
		workers = 1
	}
	done := 0
	for p, ph := range phases {
		rounds := 0
		for _, ds := range ph {
			rounds = max(rounds, len(ds))
		}
		merge := func(l *layer) {
			if p < 2 { // terminal LIDs (with SAR: in jobs, then the rest)
				for _, e := range l.inc {
					w[e.c] += e.v
				}
			}
			l.inc = l.inc[:0]
		}
		for i := 0; i < rounds; i++ {
			if err := ctx.Err(); err != nil {
				return false, fmt.Errorf("nue: %w", err)
			}
			if workers <= 1 {
				for j, l := range layers {
					if i < len(ph[j]) && !l.route(ph[j][i], w, r) {
						return false, nil
					}
					if sched == Sequential {
						merge(l)
					}
				}
			} else {
				var failed atomic.Bool
				var next atomic.Int32
				var wg sync.WaitGroup
				for k := 0; k < workers; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							j := int(next.Add(1)) - 1
							if j >= len(layers) {
								return
							}
							if i < len(ph[j]) && !layers[j].route(ph[j][i], w, r) {
								failed.Store(true)
							}
						}
					}()
				}
				wg.Wait()
				if failed.Load() {
					return false, nil
				}
			}
			for j, l := range layers {
				merge(l)
				if i < len(ph[j]) {
					done++
				}
			}
			if opt.Progress != nil {
				opt.Progress(done, total)
			}
		}
	}
	return true, nil
}
