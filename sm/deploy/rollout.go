package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/ibnetdiscover"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/plan"
)

// ErrStepTimeout means the switches did not hold a step's tables within
// Config.StepTimeout.
var ErrStepTimeout = errors.New("step did not take")

// ErrUndeliverable means OpenSM cannot deliver a generation as routed.
var ErrUndeliverable = errors.New("OpenSM cannot deliver these tables")

// ErrUnsafeState means the tables read back from the switches have a
// loop or a CDG cycle.
var ErrUnsafeState = errors.New("switches hold an unsafe state")

// rollout executes one generation: settle what is staged, plan from what
// the switches hold, run the plan step by step.
func (d *Deployer) rollout(ctx context.Context, ref genRef) error {
	d.st.Target, d.st.TargetDir, d.st.Error = ref.gen, ref.dir, ""
	g, target, err := loadGeneration(ref.dir)
	if err == nil {
		err = d.deliverable(ctx, g, target)
	}
	if err != nil {
		return d.stop(PhaseRefused, "refused", fmt.Errorf("generation %d: %w", ref.gen, err))
	}
	held, err := d.settle(ctx, g)
	if err != nil {
		return d.stop(PhaseStuck, "stuck", err)
	}
	d.checkHeld(g, held, ref.gen, "held before the rollout", nil)
	if _, err := d.osm.pid(); err != nil {
		return d.stop(PhaseNoOpenSM, "no-opensm", err)
	}
	if sameTables(g, held, target) {
		d.held.Matches = fmt.Sprintf("generation %d", ref.gen)
		return d.done(ref.gen)
	}
	p, err := d.buildPlan(ctx, g, held, target)
	if err != nil {
		return d.stop(PhaseStuck, "stuck", err)
	}
	d.plan.Generation = ref.gen
	d.st.Phase, d.st.Step, d.st.Steps, d.st.Staged = PhaseRollout, 0, len(p.Steps), 0
	d.st.Plans++
	if err := d.save(); err != nil {
		d.log.Warn("cannot save the rollout state", "err", err)
	}
	d.log.Info("rollout", "generation", ref.gen, "steps", len(p.Steps), "lft_writes", d.plan.Writes, "note", d.plan.Note)
	staged := held
	paused := map[int32]bool{} // destinations of the open drain phase
	for i := range p.Steps {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		step := &p.Steps[i]
		if step.Kind == plan.Pause {
			for _, pa := range step.Paused {
				paused[pa.DLID] = true
			}
		}
		next, err := d.runStep(ctx, g, staged, step, i, ref.gen, paused)
		if err != nil && errors.Is(err, ErrNoOpenSM) {
			return d.stop(PhaseNoOpenSM, "no-opensm", fmt.Errorf("generation %d, before step %d of %d: %w", ref.gen, i+1, len(p.Steps), err))
		}
		if step.Kind == plan.Resume {
			for _, pa := range step.Paused {
				delete(paused, pa.DLID)
			}
		}
		if err != nil {
			return d.stop(PhaseStuck, "stuck", fmt.Errorf("generation %d, step %d of %d (%s): %w", ref.gen, i+1, len(p.Steps), p.Steps[i].Kind, err))
		}
		staged = next
		d.st.Step = i + 1
		if err := d.save(); err != nil {
			d.log.Warn("cannot save the rollout state", "err", err)
		}
		if i+1 < len(p.Steps) && d.newer() {
			d.log.Info("newer generation published: re-planning from the proven state", "at_step", i+1, "of", len(p.Steps))
			return errNewer
		}
	}
	return d.done(ref.gen)
}

// done records a fully deployed generation.
func (d *Deployer) done(gen int) error {
	d.st.Phase, d.st.Deployed, d.st.Error = PhaseIdle, gen, ""
	d.st.Step = d.st.Steps
	d.met.rollouts.WithLabelValues("deployed").Inc()
	d.met.heldMatch.Set(1)
	if err := d.save(); err != nil {
		d.log.Warn("cannot save the rollout state", "err", err)
	}
	d.log.Info("deployed", "generation", gen)
	return nil
}

// stop records a rollout that cannot go on and returns err.
func (d *Deployer) stop(phase, result string, err error) error {
	d.st.Phase, d.st.Error = phase, err.Error()
	d.met.rollouts.WithLabelValues(result).Inc()
	d.met.heldMatch.Set(0)
	if serr := d.save(); serr != nil {
		d.log.Warn("cannot save the rollout state", "err", serr)
	}
	d.log.Error("rollout stopped; the switches keep the state shown in status.held", "phase", phase, "err", err)
	return err
}

// loadGeneration reads a published generation: its fabric (which must
// carry the LIDs OpenSM assigned) and its tables.
func loadGeneration(dir string) (*fabric.Graph, *lft.Routing, error) {
	path := filepath.Join(dir, "fabric.topo")
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	res, err := ibnetdiscover.Parse(f, path)
	if err != nil {
		return nil, nil, err
	}
	fab := res.Fabric
	missing := 0
	for _, r := range fab.Endpoints() {
		if fab.Port(r).LID == 0 {
			missing++
		}
	}
	if missing > 0 {
		return nil, nil, fmt.Errorf("%s: %d endpoints have no LID (OpenSM had not assigned LIDs when the fabric was discovered): the tables would not match OpenSM's LIDs: %w",
			path, missing, ErrUndeliverable)
	}
	g, err := fabric.Compile(fab)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := lft.ReadTableSet(dir, g, lft.ReadOptions{})
	if err != nil {
		return nil, nil, err
	}
	return g, r, nil
}

// settle makes the stable files equal to what the switches hold and
// returns that state with the staged SLs. A staged step may be half
// applied (nuesm or OpenSM stopped during it): the mix the switches hold
// is a state the step's proof covers, and staging exactly it means no
// later heavy sweep moves the switches behind the deployer's back.
func (d *Deployer) settle(ctx context.Context, g *fabric.Graph) (*lft.Routing, error) {
	for try := 0; ; try++ {
		held, missing, err := readLFTs(ctx, d.run, g)
		if err != nil {
			return nil, fmt.Errorf("reading the switches' tables: %w", err)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("reading the switches' tables: %d switches of the fabric did not answer (%s…): the fabric changed; waiting for a reroute", len(missing), missing[0])
		}
		d.heldSLs(g, held)
		staged := d.stagedTables(g)
		if staged != nil && sameTables(g, staged, held) {
			return held, nil
		}
		if try == 5 {
			return nil, errors.New("the switches' tables keep changing while the deployer stages them: is another SM or tool writing them?")
		}
		if err := d.stage(g, held); err != nil {
			return nil, err
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// sameTables compares LFTs, SLs and SL2VL maps (not the VL count).
func sameTables(g *fabric.Graph, a, b *lft.Routing) bool {
	if n, _ := sameLFTs(g, a, b, 0); n != 0 {
		return false
	}
	x, y := a.Clone(), b.Clone()
	y.NumVLs = x.NumVLs
	copyLFTs(g, x, y)
	return lft.Equal(x, y)
}

// copyLFTs copies src's tables into dst (same fabric).
func copyLFTs(g *fabric.Graph, src, dst *lft.Routing) {
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		copy(dst.Row(s), src.Row(s))
	}
}

// buildPlan plans from the held state to the target and proves the plan.
func (d *Deployer) buildPlan(ctx context.Context, g *fabric.Graph, held, target *lft.Routing) (*plan.Plan, error) {
	opt := plan.Options{MaxVLs: d.cfg.MaxVLs, AllowReorder: d.cfg.AllowReorder}
	base := held
	var p *plan.Plan
	var err error
	note := ""
	if held.Entries() == 0 {
		base = plan.Empty(g)
		p, err = plan.Initial(g, target)
		note = "initial tables: the switches held no routes"
	} else {
		p, err = plan.Build(ctx, g, held, target, opt)
		if err != nil && ctx.Err() == nil {
			delta, derr := lft.Diff(g, held, target)
			if derr != nil {
				return nil, fmt.Errorf("plan: %w", errors.Join(err, derr))
			}
			p, err = plan.FullDrain(g, delta), nil
			note = "no live plan from the held state: full drain"
		}
	}
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	_, verr := plan.Verify(ctx, g, base, target, p, opt)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if verr != nil {
		if d.held != nil && d.held.Safe {
			return nil, fmt.Errorf("plan from the held state does not verify: %w", verr)
		}
		note += "; the held state is itself unsafe, so the plan cannot be proven: executed to leave it"
		d.log.Warn("executing an unproven plan: the switches hold an unsafe state", "err", verr)
	}
	m := p.Metrics()
	d.plan = &PlanInfo{Steps: m.Steps, Writes: m.Writes, DrainPhases: m.DrainPhases, ChangedPairs: m.ChangedPairs, LostPairs: m.LostPairs, Note: note}
	return p, nil
}

// checkHeld verifies a state read back and records it as the held
// state. During a drain phase the pairs towards the paused destinations
// inject nothing: their paths may form dependency cycles among
// themselves (the plan proves the states they will carry traffic in), so
// the CDG check leaves those destinations out; loops count everywhere.
func (d *Deployer) checkHeld(g *fabric.Graph, held *lft.Routing, gen int, what string, paused map[int32]bool) *cdg.Report {
	h := &HeldStatus{ReadAt: time.Now().UTC(), Generation: gen, Matches: what, PausedDests: len(paused)}
	rep, _ := cdg.Verify(g, held, cdg.Options{MaxVLs: lft.MaxVLs})
	if rep != nil {
		h.Loops, h.Pairs, h.Undelivered = rep.Loops, rep.Pairs, rep.Pairs-rep.Delivered
		cyc := rep
		if len(paused) > 0 && rep.Cycle != nil {
			cyc, _ = cdg.Verify(g, WithoutDests(g, held, paused), cdg.Options{MaxVLs: lft.MaxVLs})
		}
		h.Safe = rep.Loops == 0 && cyc != nil && cyc.Cycle == nil && rep.VLsUsed <= d.cfg.MaxVLs
		if cyc != nil && cyc.Cycle != nil {
			h.Cycle = cyc.Cycle.Error()
			rep = cyc
		}
	}
	d.held = h
	b2f := map[bool]float64{false: 0, true: 1}
	d.met.heldSafe.Set(b2f[h.Safe])
	d.met.heldLost.Set(float64(h.Undelivered))
	d.met.lastProven.Set(float64(h.ReadAt.Unix()))
	return rep
}

func sleep(ctx context.Context, dur time.Duration) error {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// WithoutDests returns a copy of r in which no switch routes the given
// destination LIDs: the state as traffic sees it while those
// destinations' pairs are paused.
func WithoutDests(g *fabric.Graph, r *lft.Routing, dests map[int32]bool) *lft.Routing {
	c := r.Clone()
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		for d := range dests {
			c.SetPort(s, int(d), lft.NoPort)
		}
	}
	return c
}
