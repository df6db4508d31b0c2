package plan

import (
	"context"
	"fmt"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
)

// Stage is one part of a live update: a plan from From to To, proven on
// its own (Verify(g, From, To, Plan, …)). Stages run one after another
// with a barrier between them, so the epochs of two stages never mix.
type Stage struct {
	Plan     *Plan
	From, To *lft.Routing
}

// MaxLiveRounds bounds BuildLive's greedy rounds before it blacks out
// the destinations still left.
const MaxLiveRounds = 4

// BuildLive computes an update from old to new without Pause steps: every
// pair keeps injecting in every state, as under a subnet manager that
// cannot stop hosts (OpenSM). Each stage's plan is loop- and
// deadlock-free with all destinations live; changed pairs may be
// reordered (the plans are built with AllowReorder).
//
// It works in rounds. A round places the destinations that still differ
// greedily (Build's live strategies, destinations that lose pairs
// first), each against the old dependencies of every destination not
// moved yet; those placed move in the round's stage, which ends at the
// tables they reach (old with their columns of new). The next round
// starts from there, where the old paths that blocked a destination may
// be gone.
//
// When a round moves nothing, or after MaxLiveRounds rounds, the
// destinations left are blacked out: one stage unroutes their changed
// entries, or every entry of a destination whose SLs change (a packet
// then follows a prefix of its old path and is dropped where the old and
// new paths part, or at its first switch; every state's dependencies are
// a subset of the old ones), and a last stage writes their SLs and new
// entries into a fabric where every other destination is already at its
// new tables (a packet follows a prefix of its new path with its new SL,
// or one that old and new share with an unchanged SL). Their changed
// pairs are black-holed between the two; Plan.Blackout names them.
//
// Adjacent write steps are merged where Verify still proves the stage
// (compact). Entries and SLs for LIDs nobody answers on g (a failed switch's)
// carry no packet to a destination; a last stage writes them.
//
// When that update needs transition SLs, a second round or a blackout,
// BuildLive plans it again with a barrier after each level of ordered
// LFT writes and keeps the second plan if it is cheaper (liveCost): a
// packet that took a switch's old entry has then left the fabric before
// a switch of the next level changes, so a switch rerouted upstream of a
// changed one no longer sends packets along a turn that neither routing
// has (into the changed switch on its old entry, and on along the new).
//
// A change of the SL2VL tables cannot be made live (a packet in flight
// would meet both maps): BuildLive returns an error wrapping
// ErrNeedsDrain.
func BuildLive(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, opt Options) ([]Stage, error) {
	opt.AllowReorder, opt.NoPause = true, true
	opt, err := prepare(g, old, new, opt)
	if err != nil {
		return nil, err
	}
	stages, err := buildLive(ctx, g, old, new, opt)
	if err != nil || !liveCost(stages).costly() {
		return stages, err
	}
	opt.levelBarriers = true
	alt, err := buildLive(ctx, g, old, new, opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return stages, nil
	}
	if liveCost(alt).less(liveCost(stages)) {
		return alt, nil
	}
	return stages, nil
}

// costOf says what a live update costs: destinations blacked out first,
// then SL write steps (each with a barrier, an SA round trip for the
// hosts, and a path SL a host may keep from an old path record), then
// stages (each ends in a barrier), then steps.
type costOf struct{ blackout, stages, slSteps, steps int }

func liveCost(stages []Stage) costOf {
	c := costOf{stages: len(stages)}
	for _, st := range stages {
		c.blackout += len(st.Plan.Blackout)
		for _, s := range st.Plan.Steps {
			c.steps++
			if s.Kind == Write && len(s.SL) > 0 {
				c.slSteps++
			}
		}
	}
	return c
}

// costly: more than one stage, a blackout or SL steps.
func (c costOf) costly() bool { return c.blackout > 0 || c.stages > 1 || c.slSteps > 0 }

func (c costOf) less(o costOf) bool {
	if c.blackout != o.blackout {
		return c.blackout < o.blackout
	}
	if c.slSteps != o.slSteps {
		return c.slSteps < o.slSteps
	}
	if c.stages != o.stages {
		return c.stages < o.stages
	}
	return c.steps < o.steps
}

// buildLive is BuildLive with prepared options.
func buildLive(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, opt Options) ([]Stage, error) {
	owned, err := ownedOnly(g, old, new)
	if err != nil {
		return nil, err
	}
	stages, err := buildRounds(ctx, g, old, owned, opt)
	if err != nil {
		return nil, err
	}
	for k := range stages {
		if stages[k], err = compact(ctx, g, stages[k], opt); err != nil {
			return nil, err
		}
	}
	if owned == new {
		return stages, nil
	}
	d, err := lft.Diff(g, owned, new)
	if err != nil {
		return nil, err
	}
	last := OneShot(d)
	for i := range last.Steps {
		last.Steps[i].Note = "entries of LIDs nobody answers any more"
	}
	last.AllowReorder, last.MaxVLs = true, opt.MaxVLs
	return append(stages, Stage{Plan: last, From: owned, To: new}), nil
}

// ownedOnly returns new with the entries and SLs of LIDs nobody answers
// on g as old has them (new itself when they agree).
func ownedOnly(g *fabric.Graph, old, new *lft.Routing) (*lft.Routing, error) {
	d, err := lft.Diff(g, old, new)
	if err != nil {
		return nil, err
	}
	owned := map[int]bool{}
	for _, lid := range destLIDs(g) {
		owned[lid] = true
	}
	same := true
	for i := range d.Switches {
		sw := &d.Switches[i]
		keep := sw.Entries[:0]
		for _, e := range sw.Entries {
			if owned[e.LID] {
				keep = append(keep, e)
			} else {
				same = false
			}
		}
		sw.Entries = keep
	}
	sls := d.SL[:0]
	for _, c := range d.SL {
		if owned[c.DLID] {
			sls = append(sls, c)
		} else {
			same = false
		}
	}
	d.SL = sls
	if same {
		return new, nil
	}
	r := old.Clone()
	if err := d.Apply(r); err != nil {
		return nil, err
	}
	return r, nil
}

// buildRounds plans old -> new (which differ only in LIDs somebody
// answers) in live rounds and, when they stall, a blackout.
func buildRounds(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, opt Options) ([]Stage, error) {
	var stages []Stage
	cur := old
	for round := 1; ; round++ {
		b, err := newLiveBuilder(ctx, g, cur, new, opt)
		if err != nil {
			return nil, err
		}
		if len(b.delta.SL2VL) > 0 {
			return nil, fmt.Errorf("plan: %w: the SL2VL tables change (%d switch tables); a packet in flight would meet both maps, and only a drain of every pair orders that",
				ErrNeedsDrain, len(b.delta.SL2VL))
		}
		if len(changedDests(b)) == 0 {
			return stages, nil
		}
		if round > MaxLiveRounds {
			return blackout(ctx, g, b, stages, fmt.Sprintf("after %d live rounds", MaxLiveRounds))
		}
		if err := b.greedy(ctx); err != nil {
			return nil, err
		}
		moved, why := map[int32]bool{}, ""
		for i, in := range b.infos {
			switch b.strat[i] {
			case Unchanged:
			case Drained:
				if why == "" {
					why = fmt.Sprintf("LID %d: %s", in.d, b.why[i])
				}
			default:
				moved[in.d] = true
			}
		}
		if why == "" {
			return append(stages, Stage{Plan: b.roundPlan(round), From: cur, To: new}), nil
		}
		if len(moved) == 0 {
			return blackout(ctx, g, b, stages, fmt.Sprintf("round %d moves no destination live (%s)", round, why))
		}
		// Plan the round anew towards the tables it reaches: each
		// destination it moves was placed against a superset of the
		// dependencies it meets there.
		next, err := partial(g, cur, b.delta, moved)
		if err != nil {
			return nil, err
		}
		if b, err = settled(ctx, g, cur, next, opt, false); err != nil {
			return nil, fmt.Errorf("plan: round %d: %w", round, err)
		}
		stages = append(stages, Stage{Plan: b.roundPlan(round), From: cur, To: next})
		cur = next
	}
}

// blackout finishes a live update whose remaining destinations (b's
// changed ones) no live round moves: a stage unroutes their changed
// entries, a last one writes them.
func blackout(ctx context.Context, g *fabric.Graph, b *builder, stages []Stage, why string) ([]Stage, error) {
	p := &Plan{AllowReorder: true, MaxVLs: b.opt.MaxVLs}
	dim := b.old.Clone()
	s := Step{Kind: Write, Note: "blackout: unroute the changed entries of the destinations no live round moves (" + why + ")"}
	for i, in := range b.infos {
		if b.strat[i] == Unchanged {
			continue
		}
		p.Blackout = append(p.Blackout, in.d)
		p.ChangedPairs += in.changedPairs
		sws := in.changed
		if len(b.slByDest[in.d]) > 0 {
			sws = nil
			for x := int32(0); int(x) < g.NumSwitches(); x++ {
				if b.old.Port(x, int(in.d)) != lft.NoPort {
					sws = append(sws, x)
				}
			}
		}
		for _, x := range sws {
			s.LFT = append(s.LFT, LFTWrite{Switch: x, LID: in.d, Old: b.old.Port(x, int(in.d)), New: lft.NoPort})
			dim.SetPort(x, int(in.d), lft.NoPort)
		}
		p.Dests = append(p.Dests, DestPlan{DLID: in.d, Strategy: Blackout, TransitionSL: -1, Writes: len(sws), ChangedPairs: in.changedPairs, Why: why})
	}
	var sb stepBuilder
	sb.add(s)
	p.Steps = sb.finish()
	stages = append(stages, Stage{Plan: p, From: b.old, To: dim})
	last, err := settled(ctx, g, dim, b.new, b.opt, true)
	if err != nil {
		return nil, fmt.Errorf("plan: after the blackout: %w", err)
	}
	return append(stages, Stage{Plan: last.roundPlan(len(stages) + 1), From: dim, To: b.new}), nil
}

// settled places every changed destination of old -> new live; a
// destination left drained is an error (the caller proved it placeable).
func settled(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, opt Options, slFirst bool) (*builder, error) {
	b, err := newLiveBuilder(ctx, g, old, new, opt)
	if err != nil {
		return nil, err
	}
	b.slFirst = slFirst
	if err := b.greedy(ctx); err != nil {
		return nil, err
	}
	for i, in := range b.infos {
		if b.strat[i] == Drained {
			return nil, fmt.Errorf("LID %d cannot move live: %s", in.d, b.why[i])
		}
	}
	return b, nil
}

// roundPlan assembles a live round's plan, its step notes numbered.
func (b *builder) roundPlan(round int) *Plan {
	p := b.assemble()
	for i := range p.Steps {
		p.Steps[i].Note = fmt.Sprintf("round %d: %s", round, p.Steps[i].Note)
	}
	return p
}

// newLiveBuilder analyses the move from old to new for a live round.
func newLiveBuilder(ctx context.Context, g *fabric.Graph, old, new *lft.Routing, opt Options) (*builder, error) {
	delta, err := lft.Diff(g, old, new)
	if err != nil {
		return nil, err
	}
	b := &builder{g: g, old: old, new: new, opt: opt, delta: delta, live: true}
	if err := b.analyze(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// partial returns cur with the LFT entries and SLs of the destinations
// in moved changed as d says.
func partial(g *fabric.Graph, cur *lft.Routing, d *lft.Delta, moved map[int32]bool) (*lft.Routing, error) {
	r := cur.Clone()
	for _, sw := range d.Switches {
		for _, e := range sw.Entries {
			if moved[int32(e.LID)] {
				r.SetPort(sw.Switch, e.LID, e.New)
			}
		}
	}
	for _, c := range d.SL {
		if moved[int32(c.DLID)] {
			lft.ApplySL(&r.SL, g.NumSwitches(), c)
		}
	}
	r.SL.Compact()
	r.NumVLs = max(r.NumVLs, r.MaxVL()+1)
	return r, r.CheckShape(g)
}

// changedDests lists the destinations whose entries or SLs differ.
func changedDests(b *builder) []int32 {
	var ds []int32
	for i, in := range b.infos {
		if b.strat[i] != Unchanged {
			ds = append(ds, in.d)
		}
	}
	return ds
}
