// Package sareval evaluates scheduling-aware routing as seed 001 §3 does:
// snapshots of the jobs a batch system runs (sar.Mix: sizes from a
// workload model, placement by a SLURM-like node selection, many seeds),
// the multi-switch ones passed to the routing, and per engine the
// effective EFI over all jobs and per job and the dark-fiber percentage
// (sar.Measure), next to a lower bound no destination-based routing can
// beat (sar.Bound).
//
// Engines that do not know jobs route once per fabric; job-aware engines
// (the sar-* ones) route once per mix. Every routing is verified before
// it is measured.
package sareval

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/sar"
)

// Config is a study. Zero fields take defaults.
type Config struct {
	// Engines are engine specs, one engine each ("nue", "sar-nue:passes=4");
	// default sar-nue, nue, sar-dfsssp, dfsssp, minhop, updn.
	Engines []string
	// Allocs are the node selections of the mixes (default tree, linear).
	Allocs []sar.Alloc
	// Seeds give one mix each per allocation (default 1..10).
	Seeds []uint64
	// VLs is the engines' VL limit (default routing.DefaultMaxVLs).
	VLs int
	// Mix sets the workload (its Alloc is ignored: see Allocs).
	Mix sar.MixConfig
	// Workers bounds each engine's goroutines (0 = GOMAXPROCS); results
	// do not depend on it.
	Workers int
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if len(c.Engines) == 0 {
		c.Engines = []string{"sar-nue", "nue", "sar-dfsssp", "dfsssp", "minhop", "updn"}
	}
	if len(c.Allocs) == 0 {
		c.Allocs = []sar.Alloc{sar.AllocTree, sar.AllocLinear}
	}
	if len(c.Seeds) == 0 {
		for s := uint64(1); s <= 10; s++ {
			c.Seeds = append(c.Seeds, s)
		}
	}
	if c.VLs == 0 {
		c.VLs = routing.DefaultMaxVLs
	}
	return c
}

// Outcome is one engine on one mix: its metrics, or why it has none.
type Outcome struct {
	Engine  string
	Metrics *sar.Metrics // nil when Err is set
	Err     string       // the engine failed or its tables did not verify
}

// MixResult is one mix and every engine's outcome on it.
type MixResult struct {
	Alloc   sar.Alloc
	Seed    uint64
	Running int           // jobs running, single-switch ones included
	Busy    int           // their hosts
	Jobs    []routing.Job // the multi-switch jobs the engines were given
	Bound   int64         // sar.Bound of Jobs
	Outcome []Outcome     // in Config.Engines order
}

// Result is a study of one fabric.
type Result struct {
	Fabric          string
	Hosts, Switches int
	Config          Config
	Mixes           []MixResult
	RouteSeconds    []float64 // per engine: mean seconds per routing (with verification)
}

// jobAware reports whether an engine routes for the jobs it is given:
// the sar-* engines.
func jobAware(e routing.Engine) bool { return strings.HasPrefix(e.Name(), "sar-") }

// Run runs the study on g (named name in the result). progress, if set,
// hears one line per mix.
func Run(ctx context.Context, g *fabric.Graph, name string, cfg Config, progress func(string)) (*Result, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Mix.Validate(); err != nil {
		return nil, err
	}
	engines := make([]routing.Engine, len(cfg.Engines))
	for i, spec := range cfg.Engines {
		chain, err := routing.NewChain(spec, nil)
		if err != nil {
			return nil, err
		}
		if len(chain) != 1 {
			return nil, fmt.Errorf("sareval: engine %q: one engine per entry", spec)
		}
		engines[i] = chain[0]
	}
	res := &Result{Fabric: name, Switches: g.NumSwitches(), Config: cfg}
	for _, t := range g.Terms {
		if t.Switch >= 0 {
			res.Hosts++
		}
	}
	secs := make([]time.Duration, len(engines))
	runs := make([]int, len(engines))
	opt := routing.Options{MaxVLs: cfg.VLs, Workers: cfg.Workers}
	fixed := make([]*routed, len(engines)) // job-unaware engines: route once
	for i, e := range engines {
		if jobAware(e) {
			continue
		}
		fixed[i], secs[i] = routeVerified(ctx, g, e, opt)
		runs[i] = 1
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	for _, alloc := range cfg.Allocs {
		for _, seed := range cfg.Seeds {
			mc := cfg.Mix
			mc.Alloc = alloc
			all, err := sar.Mix(g, mc, seed)
			if err != nil {
				return nil, err
			}
			mr := MixResult{Alloc: alloc, Seed: seed, Running: len(all), Jobs: sar.MultiSwitch(g, all)}
			for _, j := range all {
				mr.Busy += len(j.Terms)
			}
			mr.Bound = sar.Bound(g, mr.Jobs)
			for i, e := range engines {
				r := fixed[i]
				if jobAware(e) {
					o := opt
					o.Jobs = mr.Jobs
					var d time.Duration
					r, d = routeVerified(ctx, g, e, o)
					secs[i] += d
					runs[i]++
				}
				mr.Outcome = append(mr.Outcome, measure(g, cfg.Engines[i], r, mr.Jobs))
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			res.Mixes = append(res.Mixes, mr)
			if progress != nil {
				progress(fmt.Sprintf("%s %s seed %d: %d multi-switch jobs", name, alloc, seed, len(mr.Jobs)))
			}
		}
	}
	for i := range engines {
		res.RouteSeconds = append(res.RouteSeconds, secs[i].Seconds()/float64(max(runs[i], 1)))
	}
	return res, nil
}

// routed is a verified routing, or why there is none.
type routed struct {
	res *routing.Result
	err string
}

// routeVerified routes g with e alone and verifies the tables.
func routeVerified(ctx context.Context, g *fabric.Graph, e routing.Engine, opt routing.Options) (*routed, time.Duration) {
	t0 := time.Now()
	res, err := routing.RouteChain(ctx, g, []routing.Engine{e}, opt)
	d := time.Since(t0)
	if err != nil {
		msg := err.Error()
		if len(res.Attempts) == 1 && res.Attempts[0].Err != nil {
			msg = res.Attempts[0].Err.Error()
		}
		return &routed{err: msg}, d
	}
	return &routed{res: res}, d
}

// measure is an engine's outcome on one mix.
func measure(g *fabric.Graph, name string, r *routed, jobs []routing.Job) Outcome {
	if r.err != "" {
		return Outcome{Engine: name, Err: r.err}
	}
	m, err := sar.Measure(g, r.res.Routing, jobs)
	if err != nil {
		return Outcome{Engine: name, Err: err.Error()}
	}
	return Outcome{Engine: name, Metrics: m}
}
