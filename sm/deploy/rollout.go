package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	tm := newPhaseTimer()
	if !ref.at.IsZero() {
		tm.last = ref.at
		tm.mark("handoff")
	}
	g, target, err := d.generation(ref)
	tm.mark("load")
	if err == nil {
		err = d.deliverable(ctx, g, target)
		tm.mark("deliverable")
	}
	// Until a generation handed over in memory is published, a rollout
	// records nothing (stop and done save state.json).
	stop := func(phase, result string, err error) error {
		if perr := d.awaitPublished(ctx, ref); perr != nil {
			return perr
		}
		return d.stop(phase, result, err)
	}
	if err != nil {
		return stop(PhaseRefused, "refused", fmt.Errorf("generation %d: %w", ref.gen, err))
	}
	held, err := d.settle(ctx, g)
	tm.mark("settle")
	if err != nil {
		return stop(PhaseStuck, "stuck", err)
	}
	d.checkHeld(g, held, ref.gen, "held before the rollout")
	tm.mark("check_held")
	if err := d.operVLs(ctx, g, target); err != nil {
		return stop(PhaseRefused, "refused", fmt.Errorf("generation %d: %w", ref.gen, err))
	}
	if _, err := d.osm.pid(); err != nil {
		return stop(PhaseNoOpenSM, "no-opensm", err)
	}
	if err := d.manageConf(held, target, func() error { return d.awaitPublished(ctx, ref) }); err != nil {
		if errors.Is(err, errNotPublished) || ctx.Err() != nil {
			return err
		}
		return stop(PhaseRefused, "refused", fmt.Errorf("generation %d: %w", ref.gen, err))
	}
	if sameTables(g, held, target) {
		if err := d.awaitPublished(ctx, ref); err != nil {
			return err
		}
		if err := d.catchUpIfPending(ctx, ref.gen); err != nil {
			return err
		}
		d.held.Matches = fmt.Sprintf("generation %d", ref.gen)
		return d.done(ref.gen)
	}
	tm.mark("conf")
	stages, err := d.buildPlan(ctx, g, held, target)
	tm.mark("plan")
	if errors.Is(err, errNoSafePlan) {
		return stop(PhaseRefused, "refused", fmt.Errorf("generation %d: %w", ref.gen, err))
	}
	if err != nil {
		return stop(PhaseStuck, "stuck", err)
	}
	// Nothing of the plan is staged before its generation is on disk: a
	// restart finds the published generation the switches move to.
	if err := d.awaitPublished(ctx, ref); err != nil {
		return err
	}
	tm.mark("published")
	d.plan.Generation = ref.gen
	d.st.Phase, d.st.Step, d.st.Steps, d.st.Staged = PhaseRollout, 0, d.plan.Steps, 0
	d.st.Plans++
	if err := d.save(); err != nil {
		d.log.Warn("cannot save the rollout state", "err", err)
	}
	d.log.Info("rollout", "generation", ref.gen, "stages", len(stages), "steps", d.plan.Steps, "lft_writes", d.plan.Writes,
		"blackout_destinations", d.plan.Blackout, "note", d.plan.Note, "prepare", tm.String())
	return d.execute(ctx, g, held, stages, ref.gen)
}

// execute runs a proven plan's stages step by step from held and records
// the generation deployed.
func (d *Deployer) execute(ctx context.Context, g *fabric.Graph, held *lft.Routing, stages []plan.Stage, gen int) error {
	// The first stage starts from held, or from the empty tables (no
	// routes held: the SLs staged before belong to no route).
	staged, n := held, 0
	if len(stages) > 0 {
		staged = stages[0].From
	}
	for k, stage := range stages {
		if k > 0 {
			// Stages are proven apart: the packets of one leave the
			// fabric before the next starts.
			if err := sleep(ctx, max(0, d.cfg.Drain)); err != nil {
				return err
			}
		}
		for i := range stage.Plan.Steps {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			step := &stage.Plan.Steps[i]
			next, err := d.runStep(ctx, g, staged, step, n, gen)
			if errors.Is(err, errNewer) {
				d.log.Info("newer generation published while a step waited on switches that do not answer: re-planning from what the switches hold", "at_step", n+1, "of", d.st.Steps, "err", err)
				return err
			}
			if err != nil && errors.Is(err, ErrNoOpenSM) {
				return d.stop(PhaseNoOpenSM, "no-opensm", fmt.Errorf("generation %d, before step %d of %d: %w", gen, n+1, d.st.Steps, err))
			}
			if err != nil {
				return d.stop(PhaseStuck, "stuck", fmt.Errorf("generation %d, step %d of %d (%s): %w", gen, n+1, d.st.Steps, step.Kind, err))
			}
			staged, n = next, n+1
			// state.json records it with the next step's staging (or
			// the end): a restart meanwhile settles from the switches
			// either way, and a synced write less sits between steps.
			d.st.Step, d.st.Updated = n, time.Now().UTC()
			d.publishStatus()
			if n < d.st.Steps && d.newer() {
				if err := d.catchUpIfPending(ctx, gen); err != nil {
					return err
				}
				d.log.Info("newer generation published: re-planning from the proven state", "at_step", n, "of", d.st.Steps)
				return errNewer
			}
		}
	}
	if err := d.catchUpIfPending(ctx, gen); err != nil {
		return err
	}
	return d.done(gen)
}

// catchUpIfPending runs catchUp after steps written with SMPs; a failure
// stops the rollout (the switches hold the last step, OpenSM's SA lags).
func (d *Deployer) catchUpIfPending(ctx context.Context, gen int) error {
	if !d.smpPending && !d.trapOwed.Load() {
		return nil
	}
	if err := d.catchUp(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return d.stop(PhaseStuck, "stuck", fmt.Errorf("generation %d, after its last step: %w", gen, err))
	}
	return nil
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

// generation returns the fabric and tables of ref: handed over in
// memory (a copy of the tables: the daemon keeps its own), or read from
// its directory. It also learns the node the diags run on from the dump.
func (d *Deployer) generation(ref genRef) (*fabric.Graph, *lft.Routing, error) {
	if m := ref.mem; m != nil {
		d.local = localNode(m.dump)
		// The daemon numbers endpoints without a LID itself (its Load), so
		// its graph has none left: the count it handed over tells.
		path := filepath.Join(ref.dir, "fabric.topo")
		if m.assigned > 0 {
			return nil, nil, missingLIDs(path, m.assigned)
		}
		if err := lidsAssigned(m.g.F, path); err != nil {
			return nil, nil, err
		}
		return m.g, m.r.Clone(), nil
	}
	if b, err := os.ReadFile(filepath.Join(ref.dir, "fabric.topo")); err == nil {
		d.local = localNode(b)
	}
	return loadGeneration(ref.dir)
}

// lidsAssigned refuses a fabric with endpoints OpenSM had not given a
// LID when it was discovered (path names its dump).
func lidsAssigned(fab *fabric.Fabric, path string) error {
	missing := 0
	for _, r := range fab.Endpoints() {
		if fab.Port(r).LID == 0 {
			missing++
		}
	}
	if missing > 0 {
		return missingLIDs(path, missing)
	}
	return nil
}

func missingLIDs(path string, n int) error {
	return fmt.Errorf("%s: %d endpoints have no LID (OpenSM had not assigned LIDs when the fabric was discovered): the tables would not match OpenSM's LIDs: %w",
		path, n, ErrUndeliverable)
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
	if err := lidsAssigned(fab, path); err != nil {
		return nil, nil, err
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
	if held := d.knownHeld(g); held != nil {
		d.heldSLs(g, held)
		return held, nil
	}
	for try := 0; ; try++ {
		off, pid := d.osm.logOffset(), d.pidOrZero()
		held, missing, err := d.read(ctx, g, nil)
		if err != nil {
			return nil, fmt.Errorf("reading the switches' tables: %w", err)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("reading the switches' tables: %d switches of the fabric did not answer (%s…): the fabric changed; waiting for a reroute", len(missing), missing[0])
		}
		d.heldSLs(g, held)
		staged := d.stagedTables(g)
		if staged != nil && sameTables(g, staged, held) {
			d.readStaged(off, pid)
			return held, nil
		}
		if try == 5 {
			return nil, errors.New("the switches' tables keep changing while the deployer stages them: is another SM or tool writing them?")
		}
		if err := d.stage(g, held); err != nil {
			return nil, err
		}
		d.markSynced()
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

// errNoSafePlan marks a generation no plan without pauses reaches
// safely from what the switches hold: the rollout is refused.
var errNoSafePlan = errors.New("no safe rollout: OpenSM cannot pause hosts, and no plan without pauses reaches these tables")

// buildPlan plans from the held state to the target and proves every
// stage. OpenSM cannot stop hosts injecting, so plans have no pauses
// (plan.BuildLive): every state is proven with every destination live,
// and destinations no live round moves are blacked out (unrouted, then
// written). The initial tables (the switches hold no routes) need no
// live plan: nothing is in flight.
func (d *Deployer) buildPlan(ctx context.Context, g *fabric.Graph, held, target *lft.Routing) ([]plan.Stage, error) {
	opt := plan.Options{MaxVLs: d.cfg.MaxVLs, AllowReorder: true}
	var stages []plan.Stage
	note := ""
	switch {
	case held.Entries() == 0:
		p, err := plan.Initial(g, target)
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		stages = []plan.Stage{{Plan: p, From: plan.Empty(g), To: target}}
		note = "initial tables: the switches held no routes"
	case d.held != nil && !d.held.Safe:
		// No plan from an unsafe state can be proven; the shortest way
		// out is every change at once.
		delta, err := lft.Diff(g, held, target)
		if err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
		stages = []plan.Stage{{Plan: plan.OneShot(delta), From: held, To: target}}
		note = "the held state is itself unsafe, so no plan can be proven: every change at once to leave it"
		d.log.Warn("executing an unproven plan: the switches hold an unsafe state", "held", d.held.Cycle, "loops", d.held.Loops)
	default:
		var err error
		t0 := time.Now()
		if stages, err = plan.BuildLive(ctx, g, held, target, opt); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w: %w", errNoSafePlan, err)
		}
		t1 := time.Now()
		for k, st := range stages {
			if _, err := plan.Verify(ctx, g, st.From, st.To, st.Plan, opt); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, fmt.Errorf("%w: stage %d of %d does not verify: %w", errNoSafePlan, k+1, len(stages), err)
			}
		}
		d.log.Debug("planned and proven", "build_seconds", t1.Sub(t0).Seconds(), "verify_seconds", time.Since(t1).Seconds())
	}
	d.plan = &PlanInfo{Stages: len(stages), Note: note}
	for _, st := range stages {
		m := st.Plan.Metrics()
		d.plan.Steps += m.Steps
		d.plan.Writes += m.Writes
		d.plan.ChangedPairs += m.ChangedPairs
		d.plan.Blackout += len(st.Plan.Blackout)
	}
	if len(stages) > 0 {
		d.plan.LostPairs = stages[0].Plan.LostPairs
	}
	return stages, nil
}

// checkHeld verifies a state read back, with the staged SLs and every
// destination live (OpenSM cannot stop hosts), and records it as the
// held state.
func (d *Deployer) checkHeld(g *fabric.Graph, held *lft.Routing, gen int, what string) *cdg.Report {
	h := &HeldStatus{ReadAt: time.Now().UTC(), Generation: gen, Matches: what}
	rep, _ := cdg.Verify(g, held, cdg.Options{MaxVLs: lft.MaxVLs})
	if rep != nil {
		h.Loops, h.Pairs, h.Undelivered = rep.Loops, rep.Pairs, rep.Pairs-rep.Delivered
		h.Safe = rep.Loops == 0 && rep.Cycle == nil && rep.VLsUsed <= d.cfg.MaxVLs
		if rep.Cycle != nil {
			h.Cycle = rep.Cycle.Error()
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

// phaseTimer times the phases of a rollout for its log line.
type phaseTimer struct {
	last  time.Time
	parts []string
}

func newPhaseTimer() *phaseTimer { return &phaseTimer{last: time.Now()} }

func (p *phaseTimer) mark(name string) {
	now := time.Now()
	p.parts = append(p.parts, fmt.Sprintf("%s=%.1fms", name, float64(now.Sub(p.last).Microseconds())/1000))
	p.last = now
}

func (p *phaseTimer) String() string { return strings.Join(p.parts, " ") }
