// Package fip is the fail-in-place study of seed 001 §2: a fabric loses
// links and switches year by year and is never repaired, except for
// critical failures (ones that would disconnect hosts), which are; after
// each year every engine reroutes the damaged fabric and the flit-level
// simulator measures what throughput is left.
package fip

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/routing"
	_ "github.com/nuesm/nuesm/sar" // registers every engine (sar, nue, dfsssp)
	"github.com/nuesm/nuesm/topo"
)

// Config is a study: which engines, how many years at which failure
// rates, which seeds, and what to simulate. Zero fields take defaults.
type Config struct {
	// Engines are engine names, with parameters where wanted
	// ("nue:share=switchlid"); default nue, dfsssp, updn, minhop.
	Engines    []string `json:"engines"`
	VLs        int      `json:"vls"`         // routing VL limit (default 8)
	Years      int      `json:"years"`       // default 8
	LinkRate   float64  `json:"link_rate"`   // of the original switch-to-switch cables per year (default 0.01)
	SwitchRate float64  `json:"switch_rate"` // of the original switches per year (default 0.01)
	Seeds      []uint64 `json:"seeds"`       // one failure sequence each (default 1, 2, 3)
	Patterns   []string `json:"patterns"`    // flitsim patterns (default shift, uniform)
	// Load is the offered load of open-loop patterns (default 1: the
	// accepted throughput is then the saturation throughput).
	Load float64 `json:"load"`
	// Sim is the simulated hardware; Cycles the cycles of a run (zero
	// fields take flitsim's defaults).
	Sim    flitsim.Config `json:"sim"`
	Cycles Cycles         `json:"cycles"`
	// Workers run (seed, year, engine) cases in parallel (0 = GOMAXPROCS);
	// results do not depend on it.
	Workers int `json:"-"`
}

// Cycles are the cycle counts of one run (see flitsim.RunOptions).
type Cycles struct {
	Warmup         int64 `json:"warmup,omitempty"`
	Measure        int64 `json:"measure,omitempty"`
	Drain          int64 `json:"drain,omitempty"`
	MaxCycles      int64 `json:"max_cycles,omitempty"`
	DeadlockWindow int64 `json:"deadlock_window,omitempty"`
}

// WithDefaults fills zero fields and sorts the seeds (the order of the
// points, so that merged SLURM array parts equal one run).
func (c Config) WithDefaults() Config {
	if len(c.Engines) == 0 {
		c.Engines = []string{"nue", "dfsssp", "updn", "minhop"}
	}
	if c.VLs == 0 {
		c.VLs = routing.DefaultMaxVLs
	}
	if c.Years == 0 {
		c.Years = 8
	}
	if c.LinkRate == 0 && c.SwitchRate == 0 {
		c.LinkRate, c.SwitchRate = 0.01, 0.01
	}
	if len(c.Seeds) == 0 {
		c.Seeds = []uint64{1, 2, 3}
	}
	c.Seeds = slices.Clone(c.Seeds)
	slices.Sort(c.Seeds)
	if len(c.Patterns) == 0 {
		c.Patterns = []string{"shift", "uniform"}
	}
	if c.Load == 0 {
		c.Load = 1
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// Point is one measurement: an engine on the fabric of one seed after one
// year (year 0 = the intact fabric) under one traffic pattern.
type Point struct {
	Seed    uint64 `json:"seed"`
	Year    int    `json:"year"`
	Engine  string `json:"engine"`
	Pattern string `json:"pattern"`

	LinkFailures   int `json:"link_failures"`   // applied so far
	SwitchFailures int `json:"switch_failures"` // applied so far
	Repaired       int `json:"repaired"`        // critical failures drawn and repaired so far

	// Error says why there is no measurement: the engine refused the
	// fabric (not applicable, too few VLs) or its tables failed the
	// verifier. Empty when the point was simulated.
	Error string `json:"error,omitempty"`
	// Acyclic: the verifier found the CDG acyclic (engines that do not
	// claim deadlock freedom are simulated either way).
	Acyclic bool    `json:"acyclic"`
	VLs     int     `json:"vls"`
	AvgHops float64 `json:"avg_hops"`
	MaxEFI  int64   `json:"max_efi"`

	// Throughput is the accepted throughput per source as a fraction of
	// the link bandwidth; Bound the analytic saturation bound of the same
	// routing and pattern (1/max channel load).
	Throughput float64 `json:"throughput"`
	Bound      float64 `json:"bound"`
	Completion int64   `json:"completion_cycles,omitempty"` // finite patterns
	Deadlock   bool    `json:"deadlock"`                    // the run stopped in a deadlock

	// Fabric bounds what any routing can reach on this seed's fabric of
	// this year (the same for every engine and pattern; see Limit).
	Fabric FabricBound `json:"fabric_bound"`
}

// Limit is the routing-independent bound for the point's pattern: no
// routing's Throughput can exceed it (Fabric.Concurrent for shift,
// Fabric.Mean for uniform at load 1). NaN for other patterns, for
// uniform below load 1, which it does not cover, and for points without a
// bound.
func (p Point) Limit(load float64) float64 {
	switch {
	case p.Fabric.Concurrent == 0: // results without bounds
	case p.Pattern == "shift":
		return p.Fabric.Concurrent
	case p.Pattern == "uniform" && load == 1:
		return p.Fabric.Mean
	}
	return math.NaN()
}

// Study runs the fail-in-place study on a fabric with LIDs and returns its
// points ordered by seed, year, engine and pattern (the orders of cfg).
// progress, when set, is called as (seed, year, engine) cases complete (at
// least after every 1/256 of them), one call at a time.
func Study(ctx context.Context, f *fabric.Fabric, cfg Config, progress func(done, total int)) ([]Point, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	type state struct {
		seed       uint64
		year       int
		fab        *fabric.Fabric
		nl, ns, nr int
	}
	var states []state
	for _, seed := range cfg.Seeds {
		ys, err := topo.FailInPlace(f, cfg.LinkRate, cfg.SwitchRate, cfg.Years, seed)
		if err != nil {
			return nil, fmt.Errorf("fip: seed %d: %w", seed, err)
		}
		states = append(states, state{seed: seed, fab: f})
		for y, yr := range ys {
			st := state{seed: seed, year: y + 1, fab: yr.Fabric, nr: len(yr.Repaired)}
			for _, fl := range yr.Failures {
				if fl.Kind == topo.LinkFailure {
					st.nl++
				} else {
					st.ns++
				}
			}
			states = append(states, st)
		}
	}
	nE, nP := len(cfg.Engines), len(cfg.Patterns)
	points := make([]Point, len(states)*nE*nP)
	bounds := make([]*FabricBound, len(states))
	total := len(states) * (nE + 1) // the cases, then a bound per fabric
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	err := parallel.ForProgress(ctx, total, cfg.Workers, progress, func(_, k int) error {
		if k >= len(states)*nE {
			return stateBound(ctx, states[k-len(states)*nE].fab, &bounds[k-len(states)*nE], cancel)
		}
		st, e := states[k/nE], cfg.Engines[k%nE]
		out := points[k*nP : (k+1)*nP]
		for i := range out {
			out[i] = Point{Seed: st.seed, Year: st.year, Engine: e, Pattern: cfg.Patterns[i],
				LinkFailures: st.nl, SwitchFailures: st.ns, Repaired: st.nr}
		}
		if err := runCase(ctx, st.fab, e, st.seed, cfg, out); err != nil {
			if ctx.Err() != nil {
				return nil // stopped by another case's failure or by the caller
			}
			cancel() // the first failure stops the cases in flight
			return fmt.Errorf("fip: seed %d year %d %s: %w", st.seed, st.year, e, err)
		}
		return nil
	})
	if err != nil && err == ctx.Err() {
		return nil, fmt.Errorf("fip: %w", err)
	}
	if err != nil {
		return nil, err
	}
	// The failures of a seed only add up (critical ones are never
	// applied), so each year's fabric is part of the year before's with
	// the same hosts: an earlier year's upper bounds hold as well.
	for k := 1; k < len(states); k++ {
		if states[k].seed == states[k-1].seed {
			b, prev := bounds[k], bounds[k-1]
			b.Concurrent, b.Mean = min(b.Concurrent, prev.Concurrent), min(b.Mean, prev.Mean)
		}
	}
	for i := range points {
		points[i].Fabric = *bounds[i/(nE*nP)]
	}
	return points, nil
}

// stateBound computes the FabricBound of f into *out; a failure cancels
// the study.
func stateBound(ctx context.Context, f *fabric.Fabric, out **FabricBound, cancel func()) error {
	g, err := fabric.Compile(f)
	if err == nil {
		*out, err = Bound(ctx, g, BoundOptions{})
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		cancel()
		return fmt.Errorf("fip: bound: %w", err)
	}
	return nil
}

// Validate refuses, before any work, a configuration (with the defaults
// of WithDefaults) that Study would refuse.
func (c Config) Validate() error { return c.WithDefaults().validate() }

func (c Config) validate() error {
	for _, e := range c.Engines {
		if _, err := lookup(e); err != nil {
			return fmt.Errorf("fip: %w", err)
		}
	}
	for _, p := range c.Patterns {
		if _, err := flitsim.ParsePattern(p); err != nil {
			return fmt.Errorf("fip: %w", err)
		}
	}
	for i := 1; i < len(c.Seeds); i++ {
		if c.Seeds[i] == c.Seeds[i-1] {
			return fmt.Errorf("fip: seed %d given twice", c.Seeds[i])
		}
	}
	if c.Years < 1 {
		return fmt.Errorf("fip: %d years, expected >= 1", c.Years)
	}
	if c.VLs < 1 || c.VLs > 15 {
		return fmt.Errorf("fip: %d VLs, expected 1..15", c.VLs)
	}
	if !(c.Load > 0 && c.Load <= 1) {
		return fmt.Errorf("fip: offered load %g, expected (0, 1]", c.Load)
	}
	return nil
}

// runCase routes one fabric with one engine, verifies and measures the
// tables and simulates every pattern into out. Refusals and unsafe tables
// are results (Point.Error); only simulator and context failures are
// errors.
func runCase(ctx context.Context, f *fabric.Fabric, engine string, seed uint64, cfg Config, out []Point) error {
	setErr := func(msg string) {
		for i := range out {
			out[i].Error = msg
		}
	}
	g, err := fabric.Compile(f)
	if err != nil {
		return err
	}
	e, err := lookup(engine)
	if err != nil {
		return err
	}
	opt := routing.Options{MaxVLs: cfg.VLs, Seed: seed, Workers: 1}
	r, err := e.Route(ctx, g, opt)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		setErr(err.Error())
		return nil
	}
	rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: cfg.VLs, Workers: 1})
	if rep == nil {
		return err
	}
	// A cycle alone is acceptable from an engine that does not claim
	// deadlock freedom (MinHop): the simulation shows what it costs.
	if rep.Delivered != rep.Pairs || rep.VLsUsed > rep.VLLimit || (rep.Cycle != nil && e.DeadlockFree()) {
		setErr("tables fail verification: " + rep.Err().Error())
		return nil
	}
	m, err := routing.Measure(g, r, 1)
	if err != nil {
		return err
	}
	net, err := flitsim.NewNetwork(g, r, cfg.Sim)
	if err != nil {
		return err
	}
	for i := range out {
		p := &out[i]
		p.Acyclic, p.VLs, p.AvgHops, p.MaxEFI = rep.Cycle == nil, rep.VLsUsed, m.AvgHops, m.MaxEFI
		pat, _ := flitsim.ParsePattern(p.Pattern)
		t := flitsim.Traffic{Pattern: pat, Load: cfg.Load}
		b, err := net.Bound(t, seed)
		if err != nil {
			return err
		}
		p.Bound = b.Saturation
		cy := cfg.Cycles
		res, err := net.Run(ctx, t, flitsim.RunOptions{Seed: seed, Warmup: cy.Warmup, Measure: cy.Measure,
			Drain: cy.Drain, MaxCycles: cy.MaxCycles, DeadlockWindow: cy.DeadlockWindow})
		var dl *flitsim.DeadlockError
		switch {
		case errors.As(err, &dl):
			p.Deadlock = true
			continue
		case err != nil:
			return err
		}
		if res.Deadlock != nil {
			p.Deadlock = true
			continue
		}
		p.Throughput, p.Completion = res.AcceptedFraction, res.Completion
	}
	return nil
}

// lookup builds the engine of spec: a name with optional parameters
// ("nue:share=switchlid"), one engine, no chain.
func lookup(spec string) (routing.Engine, error) {
	es, err := routing.ParseChain(spec)
	if err != nil {
		return nil, err
	}
	if len(es) != 1 {
		return nil, fmt.Errorf("engine %q is a chain of %d, expected one engine", spec, len(es))
	}
	return es[0], nil
}
