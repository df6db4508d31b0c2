package fip

import (
	"fmt"
	"slices"
)

// MaxYears bounds Config.Years of results read back: the reports hold a
// column per year.
const MaxYears = 1000

// check rejects results that no study writes and the reports cannot
// present: a configuration Study would refuse, more than MaxYears years,
// seeds given twice, points of a year, engine, pattern or seed the
// configuration does not list, and impossible bounds.
func (r *Results) check() error {
	c := r.Config
	seeds := slices.Clone(c.Seeds)
	slices.Sort(seeds)
	c.Seeds = seeds
	if err := c.validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if c.Years > MaxYears {
		return fmt.Errorf("config: %d years, expected 1..%d", c.Years, MaxYears)
	}
	for i, p := range r.Points {
		switch {
		case p.Year < 0 || p.Year > c.Years:
			return fmt.Errorf("point %d: year %d, expected 0..%d (config.years)", i, p.Year, c.Years)
		case !slices.Contains(c.Engines, p.Engine):
			return fmt.Errorf("point %d: engine %q, expected one of config.engines %q", i, p.Engine, c.Engines)
		case !slices.Contains(c.Patterns, p.Pattern):
			return fmt.Errorf("point %d: pattern %q, expected one of config.patterns %q", i, p.Pattern, c.Patterns)
		case !slices.Contains(seeds, p.Seed):
			return fmt.Errorf("point %d: seed %d, expected one of config.seeds %v", i, p.Seed, seeds)
		}
		if err := p.Fabric.check(); err != nil {
			return fmt.Errorf("point %d: fabric_bound: %w", i, err)
		}
	}
	return nil
}

// check rejects bounds no computation gives: rates outside [0, 1], a
// lower bound above the upper one.
func (b FabricBound) check() error {
	for _, v := range []float64{b.Concurrent, b.ConcurrentLow, b.Cut, b.Mean} {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("rate %g, expected 0..1", v)
		}
	}
	if b.ConcurrentLow > b.Concurrent {
		return fmt.Errorf("concurrent_low %g above concurrent %g", b.ConcurrentLow, b.Concurrent)
	}
	if b.Phases < 0 {
		return fmt.Errorf("%d phases, expected >= 0", b.Phases)
	}
	return nil
}
