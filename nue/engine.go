package nue

import (
	"context"

	"github.com/nuesm/nuesm/fabric"
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
	return e.routeTuned(ctx, g, opt, defaultTuning(), 1)
}

// routeTuned is RouteStats with the tuning tests vary and passes−1
// refinement passes (refine.go).
func (e Engine) routeTuned(ctx context.Context, g *fabric.Graph, opt routing.Options, tune tuning, passes int) (*lft.Routing, *Stats, error) {
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
	k := opt.MaxVLs
	if cfg.Layers > 0 {
		k = min(k, cfg.Layers)
	}
	parts, err := partition(g, ds, k, how)
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
	rn := &run{g: g, opt: opt, parts: nonEmpty, n: int64(len(ds)), jobOf: jobOf, how: how, sched: sched, share: share, tune: tune}
	r, st, err := refine(passes, &rn.opt, g.MaxLID(), func(h *history) (*lft.Routing, *Stats, error) {
		rn.hist = h
		r, st, ok, err := rn.once(ctx, false)
		if err == nil && !ok {
			// A switch LID could not fall back on escape paths added late:
			// route again with escape paths covering switch LIDs from the
			// start.
			r, st, _, err = rn.once(ctx, true)
			if err == nil {
				st.Conservative = true
			}
		}
		return r, st, err
	})
	if err != nil || cfg.Layers == 0 || cfg.KeepLayerVLs {
		return r, st, err
	}
	return r, st, SpreadVLs(g, r, opt.MaxVLs)
}

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
// own to spread over its down-links, and sharing raises the max EFI
// many times over. In direct networks the paths spread over the fabric
// anyway, and one tree per switch also puts fewer turns in use, leaving
// more freedom to later destinations: sharing balances better and routes
// faster. With SAR jobs the trees are not shared: SAR balances each job's
// paths, and one tree for a switch's CAs of a job coarsens that. A
// switch's own LID adds no load, so in all other cases it takes the tree
// of a terminal LID of its switch: a search saved, and no new turn. The
// figures behind each choice are in nue/README.md, "Shared searches".
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

// DefaultSchedule is the schedule used when none is given. Lock step
// loses balance wherever a round's destinations share sources' up-links
// (fat trees), and its speed-up is at most the number of cores, so
// Sequential is the default (nue/README.md, "Schedule and parallelism",
// has the measurements).
const DefaultSchedule = Sequential

// step is one unit of the schedule: destinations of distinct layers that
// are routed against the same weights (possibly in parallel); their
// increments are added in order afterwards.
type step []stepDest

type stepDest struct {
	layer int
	d     *dest // in its layer's dests
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
	var one []stepDest // backing of the one-destination steps
	total := 0
	for _, l := range layers {
		total += len(l.dests)
	}
	steps := make([]step, 0, total)
	for p, ph := range phases {
		rounds := 0
		for _, ds := range ph {
			rounds = max(rounds, len(ds))
		}
		at := func(j, i int) (stepDest, bool) {
			if i < len(ph[j]) {
				return stepDest{layer: j, d: &ph[j][i]}, true
			}
			return stepDest{}, false
		}
		switch {
		case p == 2 && sched == Sequential:
			// Switch LIDs add no load, so the weights no longer change
			// and the layers are independent: runSwitchLIDs routes them
			// layer by layer, in parallel.
		case sched == LockStep:
			// Rotate each layer's list so one round's destinations
			// spread over the fabric (consecutive LIDs tend to share a
			// switch).
			for i := 0; i < rounds; i++ {
				var st step
				for j, ds := range ph {
					if n := len(ds); i < n {
						st = append(st, stepDest{layer: j, d: &ds[(i+j*n/k)%n]})
					}
				}
				steps = append(steps, st)
			}
		default:
			if one == nil {
				one = make([]stepDest, 0, total)
			}
			for i := 0; i < rounds; i++ {
				for j := range ph {
					if a, ok := at(j, i); ok {
						one = append(one, a)
						steps = append(steps, one[len(one)-1:len(one):len(one)])
					}
				}
			}
		}
	}
	return steps
}
