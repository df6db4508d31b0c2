package sm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/plan"
)

// NewPlanner returns the update planner over package plan. maxVLs is the
// daemon's VL limit (0: plan.DefaultMaxVLs); tables that use more VLs
// prove the hardware has them.
func NewPlanner(maxVLs int) Planner {
	if maxVLs == 0 {
		maxVLs = plan.DefaultMaxVLs
	}
	return planner{opt: plan.Options{MaxVLs: maxVLs}}
}

// planner builds the plan, proves it with plan.Verify and hands both to
// the daemon for plan.json. Pairs whose path changes are paused across
// the change (in-order delivery, the safe default: the daemon cannot know
// which transports tolerate reordering).
type planner struct{ opt plan.Options }

// Plan never fails a reroute over planning (only on cancellation): when no
// live plan can be built it falls back to the full drain, and a plan that
// does not verify is published with Verified false and the reason.
func (pl planner) Plan(ctx context.Context, g *fabric.Graph, old, new *lft.Routing) (*PlanResult, error) {
	opt := pl.opt
	opt.MaxVLs = min(max(opt.MaxVLs, new.NumVLs, 1), lft.MaxVLs)
	if old != nil {
		opt.MaxVLs = min(max(opt.MaxVLs, old.NumVLs), lft.MaxVLs)
	}
	p, base, note, err := buildPlan(ctx, g, old, new, opt)
	if err != nil {
		return nil, err
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
	if old == nil {
		// The initial plan writes every routed entry: nuesm.lft holds
		// them, and listing them again would make plan.json larger than
		// the tables (hundreds of MB on a large fabric).
		for i := range pj.Steps {
			pj.Steps[i].LFT = nil
		}
		note = joinNote(note, "the LFT writes are every routed entry of nuesm.lft, not listed here (nuesm plan --json lists them)")
	}
	pj.Note = note
	m := pj.Metrics
	sum := PlanSummary{Steps: m.Steps, Writes: m.Writes, Blocks: m.Blocks, ChangedPairs: m.ChangedPairs,
		DrainPhases: m.DrainPhases, Verified: verr == nil && rep != nil && rep.OK(), Note: note}
	// Compact JSON: a plan lists every LFT write, and the first
	// publication of a large fabric writes every entry.
	res := &PlanResult{Summary: sum}
	res.Write = func(w io.Writer) error {
		pj.Note = res.Summary.Note
		return json.NewEncoder(w).Encode(pj)
	}
	return res, nil
}

// buildPlan returns the plan from old (nil: nothing published) to new, the
// tables it starts from, and a note on how it was made.
func buildPlan(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, opt plan.Options) (*plan.Plan, *lft.Routing, string, error) {
	if old == nil {
		p, err := plan.Initial(g, new)
		if err != nil {
			return nil, nil, "", err
		}
		p.MaxVLs = opt.MaxVLs
		return p, plan.Empty(g), "initial tables, planned from empty tables: SL2VL tables and SLs first, then every LFT entry at once", nil
	}
	p, err := plan.Build(ctx, g, old, new, opt)
	if ctx.Err() != nil {
		return nil, nil, "", ctx.Err()
	}
	if err == nil {
		return p, old, "", nil
	}
	// Old tables unsafe on this fabric (or unreadable as a routing): only
	// a drain makes the switch-over safe.
	d, derr := lft.Diff(g, old, new)
	if derr != nil {
		return nil, nil, "", fmt.Errorf("plan: %w", errors.Join(err, derr))
	}
	return plan.FullDrain(g, d), old, "no live plan (" + err.Error() + "): full drain", nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
