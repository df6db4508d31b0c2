package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/plan"
	"github.com/nuesm/nuesm/sm"
)

// planPlugin returns the daemon option installing the update planner.
func planPlugin(cfg sm.Config) ([]sm.Option, error) {
	vls := cfg.MaxVLs
	if vls == 0 {
		vls = plan.DefaultMaxVLs
	}
	// The daemon's configuration check rejects a bad max_vls; Plan
	// clamps it so that the planner never fails on it.
	return []sm.Option{sm.WithPlanner(planner{opt: plan.Options{MaxVLs: vls}})}, nil
}

// planner adapts package plan to sm.Planner: it builds the plan, proves it
// with plan.Verify and hands both to the daemon for plan.json. The VL
// limit is the daemon's max_vls (more if the tables use more); pairs whose
// path changes are paused across the change (in-order delivery, the safe
// default: the daemon cannot know which transports tolerate reordering).
type planner struct{ opt plan.Options }

// Plan never fails a reroute over planning (only on cancellation): when no
// live plan can be built it falls back to the full drain, and a plan that
// does not verify is published with Verified false and the reason.
func (pl planner) Plan(ctx context.Context, g *fabric.Graph, old, new *lft.Routing) (*sm.PlanResult, error) {
	opt := pl.opt
	// Tables that already use more VLs prove the hardware has them.
	opt.MaxVLs = min(max(opt.MaxVLs, new.NumVLs, 1), lft.MaxVLs)
	if old != nil {
		opt.MaxVLs = min(max(opt.MaxVLs, old.NumVLs), lft.MaxVLs)
	}
	var (
		p    *plan.Plan
		note string
		base = old
	)
	if old == nil {
		base = plan.Empty(g)
		var err error
		if p, err = plan.Initial(g, new); err != nil {
			return nil, err
		}
		p.MaxVLs = opt.MaxVLs
		note = "initial tables: nothing published before (or only for another fabric): SL2VL tables and SLs first, then every LFT entry at once"
	} else {
		var err error
		p, err = plan.Build(ctx, g, old, new, opt)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			// Old tables unsafe on this fabric (or unreadable as a
			// routing): only a drain makes the switch-over safe.
			d, derr := lft.Diff(g, old, new)
			if derr != nil {
				return nil, fmt.Errorf("plan: %w", errors.Join(err, derr))
			}
			p = plan.FullDrain(g, d)
			note = "no live plan (" + err.Error() + "): full drain"
		}
	}
	rep, verr := plan.Verify(ctx, g, base, new, p, opt)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	pj := p.JSON(g)
	if rep != nil {
		pj.Verify = rep.JSON()
	}
	if verr != nil {
		note = joinNote(note, "verification failed: "+verr.Error())
	}
	pj.Note = note
	m := pj.Metrics
	sum := sm.PlanSummary{Steps: m.Steps, Writes: m.Writes, Blocks: m.Blocks, ChangedPairs: m.ChangedPairs,
		DrainPhases: m.DrainPhases, Verified: verr == nil && rep != nil && rep.OK(), Note: note}
	// Compact: a plan lists every LFT write (933,120 for the first
	// publication on a k=12 fat tree), and indentation made that 79 MB,
	// the largest part of the publish time.
	return &sm.PlanResult{Summary: sum, Write: func(w io.Writer) error {
		return json.NewEncoder(w).Encode(pj)
	}}, nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
