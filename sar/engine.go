package sar

import (
	"context"
	"errors"
	"fmt"

	"github.com/nuesm/nuesm/dfsssp"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
)

// NueEngine is "sar-nue": Nue with scheduling awareness, configured as
// Nue is, plus the number of passes of its job-aware routing and whether
// it spreads job destinations' paths afterwards. Without jobs it routes
// exactly like "nue".
type NueEngine struct {
	Config nue.Config
	// Passes is the number of Nue passes of the job-aware routing (see
	// nue.Engine.RouteRefined); 0 means DefaultPasses.
	Passes int
	// NoSpread leaves out the local search that spreads one job
	// destination's paths over several channels (see spread).
	NoSpread bool
	// SpreadAll spreads every terminal's paths when no job runs, as if
	// all terminals formed one job: all-to-all balance without jobs.
	// With jobs it changes nothing.
	SpreadAll bool
}

// DefaultPasses is sar-nue's default number of passes of its job-aware
// routing, MaxPasses the most it takes. One greedy pass leaves the few
// jobs' paths unbalanced where their order leaves ties to chance; each
// further pass routes every destination against the others' final load
// (bench/sar/RESULTS.md measures the gain per pass count).
const (
	DefaultPasses = 8
	MaxPasses     = 64
)

func init() {
	routing.Register("sar-nue", func() routing.Engine { return NueEngine{} })
}

// Name returns "sar-nue".
func (NueEngine) Name() string { return "sar-nue" }

// DeadlockFree reports true (Nue's guarantee does not depend on the order
// or the weights).
func (NueEngine) DeadlockFree() bool { return true }

// Route routes with Nue, intra-job destinations first and balancing on
// intra-job paths first (opt.Jobs); see route for the choice between that
// and plain Nue.
func (e NueEngine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	passes := e.Passes
	if passes == 0 {
		passes = DefaultPasses
	}
	if passes < 0 || passes > MaxPasses {
		return nil, fmt.Errorf("sar-nue: %d passes, expected 1..%d", passes, MaxPasses)
	}
	// The spreading of paths works on Nue's layers, one SL per
	// destination; with layers=N they are spread over the VLs after it.
	base := nue.Engine{Config: e.Config}
	base.Config.KeepLayerVLs = true
	spreadVLs := e.Config.Layers > 0 && !e.Config.KeepLayerVLs
	var post func(context.Context, *fabric.Graph, *lft.Routing, routing.Options) (*lft.Routing, error)
	if !e.NoSpread || spreadVLs {
		post = func(ctx context.Context, g *fabric.Graph, r *lft.Routing, opt routing.Options) (*lft.Routing, error) {
			if !e.NoSpread {
				jobs := opt.Jobs
				if len(jobs) == 0 && e.SpreadAll {
					// One tree per destination puts all of its sources' paths
					// on one channel into its switch wherever the fabric
					// offers several (a leaf that lost an uplink, a torus).
					jobs = []routing.Job{allTerminals(g)}
				}
				var err error
				if r, _, err = spread(ctx, g, r, jobs, routing.VerifyOptions(e, opt)); err != nil {
					return r, err
				}
			}
			if spreadVLs {
				return r, nue.SpreadVLs(g, r, opt.WithDefaults().MaxVLs)
			}
			return r, nil
		}
	}
	return route(ctx, g, opt, "sar-nue", func(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
		if !opt.SAR {
			return base.Route(ctx, g, opt)
		}
		return base.RouteRefined(ctx, g, opt, passes)
	}, post)
}

// allTerminals is one job of every terminal attached to a switch.
func allTerminals(g *fabric.Graph) routing.Job {
	all := routing.Job{ID: "all"}
	for t := range g.Terms {
		if g.Terms[t].Switch >= 0 {
			all.Terms = append(all.Terms, int32(t))
		}
	}
	return all
}

// DFSSSPEngine is "sar-dfsssp": DFSSSP with scheduling awareness, as the
// SAR paper built it, configured as DFSSSP is. Without jobs it routes
// exactly like "dfsssp".
type DFSSSPEngine struct{ Config dfsssp.Config }

func init() {
	routing.Register("sar-dfsssp", func() routing.Engine { return DFSSSPEngine{} })
}

// Name returns "sar-dfsssp".
func (DFSSSPEngine) Name() string { return "sar-dfsssp" }

// DeadlockFree reports true (the layering does not depend on the order).
func (DFSSSPEngine) DeadlockFree() bool { return true }

// Route routes with DFSSSP, intra-job destinations first and balancing on
// intra-job paths (opt.Jobs); see route for the choice between that and
// plain DFSSSP.
func (e DFSSSPEngine) Route(ctx context.Context, g *fabric.Graph, opt routing.Options) (*lft.Routing, error) {
	return route(ctx, g, opt, "sar-dfsssp", dfsssp.DFSSSP{Config: e.Config}.Route, nil)
}

// route runs the base engine twice, in parallel: job-aware (opt.SAR) and
// plain, and keeps the job-aware tables only where they serve the jobs at
// least as well on both of SAR's measures: the effective EFI of all jobs
// together and that of the worst-off job. So SAR never leaves the jobs, or
// the worst-off one, worse than the base engine would. Job-first
// balancing is not always better: where the plain routing already meets
// the bound for every job (Nue on a complete fat tree) or the jobs are
// scattered over a torus, it can come out worse on one measure. Both runs
// are deterministic, so the choice is too. Without jobs only the plain
// run happens. post, if not nil, then improves the chosen tables for the
// jobs (or, without jobs, as it decides); it must leave neither measure
// worse.
func route(ctx context.Context, g *fabric.Graph, opt routing.Options, name string,
	base func(context.Context, *fabric.Graph, routing.Options) (*lft.Routing, error),
	post func(context.Context, *fabric.Graph, *lft.Routing, routing.Options) (*lft.Routing, error)) (*lft.Routing, error) {
	named := func(r *lft.Routing, err error) (*lft.Routing, error) {
		if r != nil {
			r.Engine = name
		}
		// Name the engine the admin chose in "needed N VLs", not the one
		// inside.
		var vle *routing.VLError
		if errors.As(err, &vle) {
			e := *vle
			e.Engine = name
			err = &e
		}
		return r, err
	}
	if len(opt.Jobs) == 0 {
		opt.SAR = false
		r, err := base(ctx, g, opt)
		if err != nil || post == nil {
			return named(r, err)
		}
		return named(post(ctx, g, r, opt))
	}
	type result struct {
		r   *lft.Routing
		m   *Metrics
		err error
	}
	run := func(sar bool) result {
		o := opt
		o.SAR = sar
		if o.Workers > 1 {
			o.Workers = max(1, o.Workers/2)
		}
		r, err := base(ctx, g, o)
		if err != nil {
			return result{err: err}
		}
		m, err := Measure(g, r, opt.Jobs)
		return result{r, m, err}
	}
	plainc := make(chan result, 1)
	go func() { plainc <- run(false) }()
	aware := run(true)
	plain := <-plainc
	var r *lft.Routing
	switch {
	case aware.err != nil && plain.err != nil:
		return named(nil, aware.err)
	case aware.err != nil:
		r = plain.r
	case plain.err != nil:
		r = aware.r
	case plain.m.MaxJobEFI < aware.m.MaxJobEFI || plain.m.EffectiveEFI < aware.m.EffectiveEFI:
		r = plain.r
	default:
		r = aware.r
	}
	if post == nil {
		return named(r, nil)
	}
	return named(post(ctx, g, r, opt))
}
