package plan

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/parallel"
	"github.com/nuesm/nuesm/lft"
)

// Build computes a consistent update plan from old to new, two routings
// of g (the fabric as it is now: entries of old that lead over failed
// links are dead, and the pairs they lose are reported as lost). new must
// pass cdg.Verify within opt.MaxVLs; old must be loop-free and
// deadlock-free on g, undelivered pairs aside. The plan is deterministic
// and does not depend on opt.Workers.
//
// Per destination LID it picks the cheapest strategy it can prove safe
// (see the package comment): ordered in place, an SL switch before or
// after the ordered writes, a fresh transition SL, or a drain phase. With
// opt.NoPause and a destination that needs a drain phase it returns the
// plan with the drain phase and a *DrainError.
func Build(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, opt Options) (*Plan, error) {
	opt, err := prepare(g, old, new, opt)
	if err != nil {
		return nil, err
	}
	delta, err := lft.Diff(g, old, new)
	if err != nil {
		return nil, err
	}
	b := &builder{g: g, old: old, new: new, opt: opt, delta: delta}
	if err := b.analyze(ctx); err != nil {
		return nil, err
	}
	strict := !opt.AllowReorder || len(delta.SL2VL) > 0
	if strict {
		b.strict()
	} else if err := b.greedy(ctx); err != nil {
		return nil, err
	}
	p := b.assemble()
	if opt.NoPause {
		var de *DrainError
		for _, dp := range p.Dests {
			if dp.Strategy != Drained {
				continue
			}
			if de == nil {
				de = &DrainError{Reason: fmt.Sprintf("LID %d: %s", dp.DLID, dp.Why), Fallback: p}
			}
			de.Dests = append(de.Dests, dp.DLID)
			de.Pairs += dp.ChangedPairs
		}
		if de != nil {
			return p, de
		}
	}
	return p, nil
}

// prepare validates a build's inputs and returns opt with its defaults.
func prepare(g *fabric.Graph, old, new *lft.Routing, opt Options) (Options, error) {
	if err := opt.Validate(); err != nil {
		return opt, err
	}
	opt = opt.withDefaults()
	if g == nil || old == nil || new == nil {
		return opt, fmt.Errorf("plan: build needs a fabric and both routings")
	}
	return opt, checkEndpoints(g, old, new, opt)
}

// checkEndpoints verifies the two routings on their own.
func checkEndpoints(g *fabric.Graph, old, new *lft.Routing, opt Options) error {
	if err := old.CheckShape(g); err != nil {
		return fmt.Errorf("plan: old tables: %w", err)
	}
	if err := new.CheckShape(g); err != nil {
		return fmt.Errorf("plan: new tables: %w", err)
	}
	if _, err := cdg.Verify(g, new, cdg.Options{MaxVLs: opt.MaxVLs, SwitchDelivery: opt.SwitchDelivery, Workers: opt.Workers}); err != nil {
		return fmt.Errorf("plan: new tables: %w: %w", ErrUnsafeTables, err)
	}
	rep, err := cdg.Verify(g, old, cdg.Options{MaxVLs: opt.MaxVLs, Workers: opt.Workers})
	if rep == nil {
		return fmt.Errorf("plan: old tables: %w", err)
	}
	if rep.Loops > 0 || rep.Cycle != nil || rep.VLsUsed > opt.MaxVLs {
		return fmt.Errorf("plan: old tables: %w: %w", ErrUnsafeTables, err)
	}
	return nil
}

// builder carries one Build.
type builder struct {
	g        *fabric.Graph
	old, new *lft.Routing
	opt      Options
	delta    *lft.Delta
	w        *world
	infos    []destInfo // destinations answered by somebody, by LID
	strat    []Strategy // per info
	freshSL  []int8     // per info: FreshSL's transition SL
	why      []string   // per info: why it is drained
	slByDest map[int32][]lft.SLChange
	// drainFirst opens the drain phase before the live epochs (greedy).
	drainFirst bool
	// live: nothing can be paused (BuildLive). A destination not yet
	// moved keeps injecting on its old paths, so the greedy counts all
	// of its old dependencies, and destinations that lose pairs go first.
	live bool
	// slFirst tries SLFirst before SLLast: after a blackout every state
	// of SLFirst moves is one of the new tables' (BuildLive).
	slFirst bool
	// levels is the deepest LFT level of a changed destination.
	levels int32
}

// destLIDs lists the LIDs somebody answers.
func destLIDs(g *fabric.Graph) []int {
	var ds []int
	for lid := 1; lid <= g.MaxLID(); lid++ {
		if sw, term := g.Owner(lid); sw >= 0 || term >= 0 {
			ds = append(ds, lid)
		}
	}
	return ds
}

func (b *builder) analyze(ctx context.Context) error {
	cross := !b.old.SL2VL.Uniform() || !b.new.SL2VL.Uniform()
	b.w = newWorld(b.g, b.old, b.opt.MaxVLs, cross)
	b.w.after = &b.new.SL2VL // for seeds only: no SL2VL schedule while planning
	b.w.perPort = cross
	pairDest := map[int32]bool{}
	for _, m := range []map[uint32]uint8{b.old.SL.Pair, b.new.SL.Pair} {
		for k := range m {
			pairDest[int32(k&0xFFFF)] = true
		}
	}
	sameVLs := len(b.delta.SL2VL) == 0
	ds := destLIDs(b.g)
	infos := make([]destInfo, len(ds))
	ok := make([]bool, len(ds))
	an := make([]*analyzer, b.opt.Workers)
	if err := parallel.For(ctx, len(ds), b.opt.Workers, func(w, i int) error {
		if an[w] == nil {
			an[w] = newAnalyzer(b.w, b.new, pairDest, sameVLs)
			an[w].upstream = b.opt.levelBarriers
		}
		infos[i], ok[i] = an[w].analyze(ds[i])
		return nil
	}); err != nil {
		return err
	}
	for i := range infos {
		if ok[i] {
			b.infos = append(b.infos, infos[i])
		}
	}
	b.strat = make([]Strategy, len(b.infos))
	b.freshSL = make([]int8, len(b.infos))
	b.why = make([]string, len(b.infos))
	b.slByDest = map[int32][]lft.SLChange{}
	for _, c := range b.delta.SL {
		b.slByDest[int32(c.DLID)] = append(b.slByDest[int32(c.DLID)], c)
	}
	for i := range b.infos {
		b.freshSL[i] = -1
		b.strat[i] = b.baseStrategy(&b.infos[i])
		if b.strat[i] != Unchanged {
			b.levels = max(b.levels, b.infos[i].maxLevel)
		}
	}
	return nil
}

// baseStrategy is Unchanged, Dark, or InPlace (to be refined).
func (b *builder) baseStrategy(in *destInfo) Strategy {
	switch {
	case len(in.changed) == 0 && len(b.slByDest[in.d]) == 0:
		return Unchanged
	case in.changedPairs == 0:
		return Dark
	}
	return InPlace
}

// strict drains every destination with changed pairs: in-order delivery
// for every pair (and the only choice when SL2VL tables change).
func (b *builder) strict() {
	why := "in-order delivery of changed pairs"
	if len(b.delta.SL2VL) > 0 {
		why = "SL2VL tables change"
	}
	for i := range b.infos {
		if b.strat[i] == InPlace {
			b.strat[i], b.why[i] = Drained, why
		}
	}
}

// assemble turns the strategies into steps.
//
//	P  with drainFirst: pause the drained destinations' changed pairs
//	A  sources switch to transition SLs (SLFirst, FreshSL)   — barrier
//	B  ordered LFT levels of the live destinations           — barrier
//	C  sources switch to the new SLs (SLLast, FreshSL)       — barrier
//	Q  pause (unless at P), levels of the drained destinations, resume
//	Z  barrier, entries whose new value delivers nothing
func (b *builder) assemble() *Plan {
	p := &Plan{AllowReorder: b.opt.AllowReorder, MaxVLs: b.opt.MaxVLs}
	sb, at := b.skeleton()
	for _, c := range b.delta.SL2VL {
		i := at.B
		if at.anyDrain {
			i = at.Q
		}
		sb.steps[i].SL2VL = append(sb.steps[i].SL2VL, c)
		sb.steps[i].NewDefault = b.delta.NewDefault
	}
	for i := range b.infos {
		if b.strat[i] == Unchanged {
			continue
		}
		dp := b.place(&sb, at, i)
		p.Dests = append(p.Dests, dp)
		p.ChangedPairs += dp.ChangedPairs
	}
	for _, in := range b.infos {
		p.Pairs += in.pairs
		p.LostPairs += in.lostPairs
	}
	p.Steps = sb.finish()
	return p
}

// skeletonAt holds the indices of assemble's steps (see there): P and R
// are -1 without a drain phase; B and Q are the first of their levels.
type skeletonAt struct {
	P, A, B, C, Q, R, Z int
	anyDrain            bool
}

// skeleton lays out assemble's steps, as many LFT levels as the deepest
// live and drained destinations need, with nothing in them yet.
func (b *builder) skeleton() (stepBuilder, skeletonAt) {
	var liveL, drainL int32
	anyDrain := false
	for i, in := range b.infos {
		switch b.strat[i] {
		case Unchanged:
			continue
		case Drained:
			drainL, anyDrain = max(drainL, in.maxLevel), true
		default:
			liveL = max(liveL, in.maxLevel)
		}
	}
	liveL, drainL = max(liveL, 1), max(drainL, 1)
	var sb stepBuilder
	at := skeletonAt{P: -1, R: -1, anyDrain: anyDrain}
	pause := Step{Kind: Pause, Note: "drain phase: stop the changed pairs, wait until their packets left the fabric"}
	if anyDrain && b.drainFirst {
		pause.Note = "drain phase: stop the changed pairs that cannot move live, wait until their packets left the fabric"
		at.P = sb.add(pause)
		// Only the paused pairs drained at P: the barrier keeps the
		// epochs of the live destinations apart from their last packets.
		sb.add(Step{Kind: Barrier, Note: "packets injected before the drain phase drain"})
	}
	at.A = sb.add(Step{Kind: Write, Note: "sources switch to transition SLs"})
	sb.add(Step{Kind: Barrier, Note: "packets with the old SLs drain"})
	at.B = len(sb.steps)
	for l := int32(1); l <= liveL; l++ {
		sb.add(Step{Kind: Write, Note: fmt.Sprintf("ordered LFT writes, level %d of %d (each switch after its new next hop)", l, liveL)})
		if b.opt.levelBarriers && l < liveL {
			sb.add(Step{Kind: Barrier, Note: fmt.Sprintf("packets that met entries older than level %d drain", l)})
		}
	}
	sb.add(Step{Kind: Barrier, Note: "packets of mixed paths drain"})
	at.C = sb.add(Step{Kind: Write, Note: "sources switch to the new SLs"})
	sb.add(Step{Kind: Barrier, Note: "packets of the transition drain"})
	at.Q = len(sb.steps)
	if anyDrain {
		if at.P < 0 {
			at.P = sb.add(pause)
		}
		at.Q = len(sb.steps)
		for l := int32(1); l <= drainL; l++ {
			sb.add(Step{Kind: Write, Note: fmt.Sprintf("LFT writes of the drain phase, level %d of %d", l, drainL)})
		}
	}
	if anyDrain {
		at.R = sb.add(Step{Kind: Resume, Note: "drain phase ends: the paused pairs use the new paths"})
	}
	sb.add(Step{Kind: Barrier, Note: "no packet can still reach the entries written last"})
	at.Z = sb.add(Step{Kind: Write, Note: "entries no path uses any more"})
	return sb, at
}

// place puts the LFT and SL writes of changed destination i into the
// steps of its strategy and returns its summary.
func (b *builder) place(sb *stepBuilder, at skeletonAt, i int) DestPlan {
	in, st := &b.infos[i], b.strat[i]
	base := at.B
	if st == Drained {
		base = at.Q
		pa := Paused{DLID: in.d, Sources: in.changedSrc, Pairs: in.changedPairs}
		sb.steps[at.P].Paused = append(sb.steps[at.P].Paused, pa)
		sb.steps[at.R].Paused = append(sb.steps[at.R].Paused, pa)
	}
	for j, x := range in.changed {
		wr := LFTWrite{Switch: x, LID: in.d, Old: b.old.Port(x, int(in.d)), New: b.new.Port(x, int(in.d))}
		k := at.Z
		if in.level[j] > 0 {
			k = base + int(in.level[j]) - 1
			if b.opt.levelBarriers && st != Drained {
				k = base + 2*(int(in.level[j])-1)
			}
		}
		sb.steps[k].LFT = append(sb.steps[k].LFT, wr)
	}
	sls := b.slByDest[in.d]
	switch st {
	case SLFirst:
		sb.steps[at.A].SL = append(sb.steps[at.A].SL, sls...)
	case SLLast:
		sb.steps[at.C].SL = append(sb.steps[at.C].SL, sls...)
	case FreshSL:
		to, back := b.freshRecords(in, uint8(b.freshSL[i]))
		sb.steps[at.A].SL = append(sb.steps[at.A].SL, to...)
		sb.steps[at.C].SL = append(sb.steps[at.C].SL, back...)
	default:
		sb.steps[base].SL = append(sb.steps[base].SL, sls...)
	}
	return DestPlan{DLID: in.d, Strategy: st, TransitionSL: b.freshSL[i], Levels: int(in.maxLevel),
		Writes: len(in.changed), ChangedPairs: in.changedPairs, Why: b.why[i]}
}

// freshRecords are the SL changes that move destination in to transition
// SL t and back to its new SLs, at the granularity of the routings' SL
// tables (per destination, else per source switch).
func (b *builder) freshRecords(in *destInfo, t uint8) (to, back []lft.SLChange) {
	d := int(in.d)
	if b.old.SL.BySrc == nil && b.new.SL.BySrc == nil {
		o, n := slAt(b.old.SL.ByDest, d), slAt(b.new.SL.ByDest, d)
		return []lft.SLChange{{DLID: d, Src: -1, Old: o, New: t}}, []lft.SLChange{{DLID: d, Src: -1, Old: t, New: n}}
	}
	for u := int32(0); int(u) < b.g.NumSwitches(); u++ {
		o, n := b.old.SL.Of(u, 0, d), b.new.SL.Of(u, 0, d)
		to = append(to, lft.SLChange{DLID: d, Src: u, Old: o, New: t})
		back = append(back, lft.SLChange{DLID: d, Src: u, Old: t, New: n})
	}
	return to, back
}
