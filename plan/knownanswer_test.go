package plan

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// ringReroute is the known-answer case: a ring of six switches (one host
// each) routed as a line without the cable r0-r5, rerouted as a line
// without r2-r3. Both are deadlock-free on one VL; the union of their
// dependencies covers the ring in both directions.
func ringReroute(t testing.TB) (*fabric.Graph, *lft.Routing, *lft.Routing) {
	t.Helper()
	tp, err := topo.Ring(6, 1, nil)
	g := compile(t, tp, err)
	old := treeRouting(t, g, "line-a", cut(g, 0, 5))
	new := treeRouting(t, g, "line-b", cut(g, 2, 3))
	mustVerify(t, g, old, 1)
	mustVerify(t, g, new, 1)
	return g, old, new
}

func obligation(t testing.TB, rep *Report, name string) Obligation {
	t.Helper()
	for _, o := range rep.Obligations {
		if o.Name == name {
			return o
		}
	}
	t.Fatalf("no obligation %q in\n%s", name, rep)
	return Obligation{}
}

// The naive update (OpenSM's: every block at once, any order) loops and
// deadlocks on the ring; the verifier finds both, state by state and by
// the union argument.
func TestRingOneShotCaught(t *testing.T) {
	g, old, new := ringReroute(t)
	p := OneShot(mustDiff(t, g, old, new))
	opt := Options{MaxVLs: 1, AllowReorder: true}
	rep, err := Verify(context.Background(), g, old, new, p, opt)
	if !errors.Is(err, ErrUnsafePlan) || rep.OK() {
		t.Fatalf("one-shot update accepted: %v\n%s", err, rep)
	}
	if obligation(t, rep, "loop freedom").OK || obligation(t, rep, "deadlock freedom").OK {
		t.Fatalf("one-shot: loops and a dependency cycle expected\n%s", rep)
	}
	if !obligation(t, rep, "shape").OK {
		t.Fatalf("one-shot plan is well formed\n%s", rep)
	}
	s := rep.Steps[0]
	if s.States != 1<<s.Units || s.StateFailures == 0 || s.StateCycle == nil {
		t.Fatalf("exhaustive check of the one step: %d units, %d states, %d failing, cycle %v", s.Units, s.States, s.StateFailures, s.StateCycle)
	}
	if rep.Epochs[0].Cycle == nil {
		t.Fatal("no in-flight cycle reported")
	}
	// Each single write of the one-shot plan already breaks something:
	// applying one block alone loops a pair (cdg agrees).
	for _, sw := range mustDiff(t, g, old, new).Switches {
		r := old.Clone()
		for _, e := range sw.Entries {
			r.SetPort(sw.Switch, e.LID, e.New)
		}
		if cdgSafe(g, r, 1) {
			continue
		}
		return
	}
	t.Fatal("no single block write of the ring reroute is unsafe on its own")
}

// The plan avoids what the naive update does, with and without the
// in-order guarantee and with drain phases forbidden (then a DrainError
// carries the fallback, which is itself safe).
func TestRingPlanSafe(t *testing.T) {
	g, old, new := ringReroute(t)
	ctx := context.Background()

	relaxed := Options{MaxVLs: 1, AllowReorder: true}
	p := build(t, g, old, new, relaxed)
	rep := verify(t, g, old, new, p, relaxed)
	if !rep.OK() {
		t.Fatalf("relaxed plan unsafe:\n%s", rep)
	}
	m := p.Metrics()
	if m.Strategies["in-place"] == 0 || m.Strategies["drained"] == 0 {
		t.Fatalf("ring on one VL: some destinations move in place, the rest need a drain; got %v", m.Strategies)
	}
	if m.Writes != 36 || rep.ChangedPairs != 36 || rep.Pairs != 66 {
		t.Fatalf("writes %d, changed pairs %d of %d; want 36, 36 of 66", m.Writes, rep.ChangedPairs, rep.Pairs)
	}
	for _, d := range p.Dests {
		if d.Strategy == Drained && d.Why == "" {
			t.Fatalf("LID %d drained without a reason", d.DLID)
		}
	}

	strict := Options{MaxVLs: 1}
	ps := build(t, g, old, new, strict)
	rs := verify(t, g, old, new, ps, strict)
	if !rs.OK() || rs.ReorderPairs != 0 {
		t.Fatalf("strict plan: OK=%v, %d pairs may reorder\n%s", rs.OK(), rs.ReorderPairs, rs)
	}
	if ms := ps.Metrics(); ms.PausedPairs != 36 || ms.DrainPhases != 1 {
		t.Fatalf("strict: %d pairs paused in %d drain phases; want the 36 changed pairs in 1", ms.PausedPairs, ms.DrainPhases)
	}

	_, err := Build(ctx, g, old, new, Options{MaxVLs: 1, AllowReorder: true, NoPause: true})
	var de *DrainError
	if !errors.As(err, &de) || !errors.Is(err, ErrNeedsDrain) || len(de.Dests) == 0 || de.Fallback == nil {
		t.Fatalf("no-pause on the ring: %v", err)
	}
	if fr := verify(t, g, old, new, de.Fallback, relaxed); !fr.OK() {
		t.Fatalf("drain fallback unsafe:\n%s", fr)
	}
	full := FullDrain(g, mustDiff(t, g, old, new))
	if fr := verify(t, g, old, new, full, strict); !fr.OK() {
		t.Fatalf("full drain unsafe:\n%s", fr)
	}
}

// Ordering alone is not enough: every destination moved in place, each in
// reverse topological order of its new tree, never loops, but packets on
// old paths of some destinations and new paths of others close a cycle.
// The verifier finds the deadlock with every loop obligation met.
func TestRingOrderedInPlaceDeadlocks(t *testing.T) {
	g, old, new := ringReroute(t)
	opt := Options{MaxVLs: 1, AllowReorder: true}.withDefaults()
	b := &builder{g: g, old: old, new: new, opt: opt, delta: mustDiff(t, g, old, new)}
	if err := b.analyze(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := range b.infos {
		if b.strat[i] != InPlace {
			t.Fatalf("LID %d: strategy %v before planning", b.infos[i].d, b.strat[i])
		}
	}
	p := b.assemble() // all in place, no drain
	rep := verify(t, g, old, new, p, opt)
	if !obligation(t, rep, "loop freedom").OK || !obligation(t, rep, "delivery").OK {
		t.Fatalf("ordered in-place writes must not loop or drop:\n%s", rep)
	}
	if obligation(t, rep, "deadlock freedom").OK {
		t.Fatalf("ordered in-place writes of every destination: a dependency cycle expected\n%s", rep)
	}
}

// A deliberately wrong order: the safe plan's ordered levels reversed
// (each switch before its new next hop) loops.
func TestRingReversedOrderCaught(t *testing.T) {
	g, old, new := ringReroute(t)
	opt := Options{MaxVLs: 1, AllowReorder: true}
	p := build(t, g, old, new, opt)
	start := slices.IndexFunc(p.Steps, func(s Step) bool { return s.Kind == Write })
	end := start + slices.IndexFunc(p.Steps[start:], func(s Step) bool { return s.Kind != Write })
	if start < 0 || end-start < 2 {
		t.Fatalf("expected several ordered write steps, got steps %d..%d", start, end)
	}
	bad := &Plan{Steps: slices.Clone(p.Steps), AllowReorder: true}
	slices.Reverse(bad.Steps[start:end])
	rep := verify(t, g, old, new, bad, opt)
	if rep.OK() || obligation(t, rep, "loop freedom").OK {
		t.Fatalf("reversed order accepted:\n%s", rep)
	}
	if !obligation(t, rep, "shape").OK {
		t.Fatalf("reversed plan is well formed:\n%s", rep)
	}
}
