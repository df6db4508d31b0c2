package plan

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	_ "github.com/nuesm/nuesm/dfsssp"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// The property of the issue: random fabric, two routings from our engines
// (the second after random link failures), the plan's every intermediate
// state passes the verifier, strict and relaxed, at random VL limits.
func TestPropertyRandomReroutes(t *testing.T) {
	engines := []string{"nue", "dfsssp", "updn", "lash"}
	ctx := context.Background()
	checked, unsafeOneShot := 0, 0
	for seed := uint64(1); seed <= 24; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		tp, err := topo.Random(6+rng.IntN(10), 3+rng.IntN(2), 1+rng.IntN(2), seed)
		if err != nil {
			t.Fatal(err)
		}
		g0, err := fabric.Compile(tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		g := g0
		if seed%2 == 0 {
			g = failLinks(t, tp, 0.05, seed)
		}
		vls := 2 + rng.IntN(6)
		e1, e2 := engines[rng.IntN(len(engines))], engines[rng.IntN(len(engines))]
		old, err1 := tryRoute(g0, e1, routing.Options{MaxVLs: vls, Seed: seed})
		new, err2 := tryRoute(g, e2, routing.Options{MaxVLs: vls, Seed: seed + 1})
		if err1 != nil || err2 != nil {
			t.Logf("seed %d: skipped (%v, %v)", seed, err1, err2)
			continue
		}
		name := fmt.Sprintf("seed %d %s->%s vls %d", seed, e1, e2, vls)
		for _, opt := range []Options{{MaxVLs: vls}, {MaxVLs: vls, AllowReorder: true}, {MaxVLs: 15, AllowReorder: true, Workers: 1}} {
			p, err := Build(ctx, g, old, new, opt)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, opt, err)
			}
			rep := verify(t, g, old, new, p, opt)
			if !rep.OK() {
				t.Fatalf("%s %+v: plan unsafe:\n%s", name, opt, rep)
			}
			if opt.AllowReorder == false && rep.ReorderPairs != 0 {
				t.Fatalf("%s: strict plan lets %d pairs reorder", name, rep.ReorderPairs)
			}
		}
		rep := verify(t, g, old, new, OneShot(mustDiff(t, g, old, new)), Options{MaxVLs: vls, AllowReorder: true})
		if !rep.OK() {
			unsafeOneShot++
		}
		checked++
	}
	if checked < 16 {
		t.Fatalf("only %d random reroutes checked", checked)
	}
	t.Logf("%d random reroutes planned and proven; the one-shot update was unsafe in %d", checked, unsafeOneShot)
}

func tryRoute(g *fabric.Graph, engine string, opt routing.Options) (*lft.Routing, error) {
	e, err := routing.Lookup(engine)
	if err != nil {
		return nil, err
	}
	return e.Route(context.Background(), g, opt)
}

// The verifier's per-step verdict against a plain reference: every state
// of every step (each 64-entry block landed or not, earlier steps applied)
// built as a routing and checked by cdg.Verify. A step is unsafe for the
// reference iff some state loops, drops a pair or has a dependency cycle;
// Verify must say the same by enumeration, and its union argument must
// find exactly the steps with a looping or dropping state.
func TestVerifyStatesMatchReference(t *testing.T) {
	ctx := context.Background()
	unsafe, safe := 0, 0
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		tp, err := topo.Random(5+rng.IntN(3), 3, 1, seed)
		g := compile(t, tp, err)
		roots := rng.Perm(g.NumSwitches())
		old := updnAt(t, g, int32(roots[0]))
		new := updnAt(t, g, int32(roots[1]))
		d := mustDiff(t, g, old, new)
		// A random plan: every changed entry in one of three steps.
		nsteps := 1 + rng.IntN(3)
		p := &Plan{AllowReorder: true, Steps: make([]Step, nsteps)}
		for _, sw := range d.Switches {
			for _, e := range sw.Entries {
				k := rng.IntN(nsteps)
				p.Steps[k].LFT = append(p.Steps[k].LFT, LFTWrite{Switch: sw.Switch, LID: int32(e.LID), Old: e.Old, New: e.New})
			}
		}
		opt := Options{MaxVLs: 1, AllowReorder: true, MaxExhaustive: 12}
		rep, _ := Verify(ctx, g, old, new, p, opt)
		if rep == nil {
			t.Fatal("no report")
		}
		applied := old.Clone()
		for k := range p.Steps {
			s := &p.Steps[k]
			us := units(s)
			refFail, refLoopDrop := 0, false
			for mask := 0; mask < 1<<len(us); mask++ {
				r := applied.Clone()
				for _, w := range s.LFT {
					for i, u := range us {
						if mask&(1<<i) != 0 && u.sw == w.Switch && u.blk == int32(lft.Block(int(w.LID))) {
							r.SetPort(w.Switch, int(w.LID), w.New)
						}
					}
				}
				crep, _ := cdg.Verify(g, r, cdg.Options{MaxVLs: 1})
				if crep.Delivered != crep.Pairs {
					refLoopDrop = true
				}
				if crep.Delivered != crep.Pairs || crep.Cycle != nil {
					refFail++
				}
			}
			sr := rep.Steps[k]
			if len(us) > 0 && sr.States != 1<<len(us) {
				t.Fatalf("seed %d step %d: %d states checked, want %d", seed, k+1, sr.States, 1<<len(us))
			}
			gotFail := sr.StateFailures > 0 || sr.StateCycle != nil
			if gotFail != (refFail > 0) {
				t.Fatalf("seed %d step %d: verifier says unsafe=%v (%d state failures, cycle %v), reference finds %d unsafe states",
					seed, k+1, gotFail, sr.StateFailures, sr.StateCycle, refFail)
			}
			if union := sr.Loops+sr.Dropped > 0; union != refLoopDrop {
				t.Fatalf("seed %d step %d: union argument says loops/drops=%v (%d, %d), reference %v", seed, k+1, union, sr.Loops, sr.Dropped, refLoopDrop)
			}
			if refFail > 0 {
				unsafe++
			} else {
				safe++
			}
			for _, w := range s.LFT {
				applied.SetPort(w.Switch, int(w.LID), w.New)
			}
		}
	}
	if unsafe == 0 || safe == 0 {
		t.Fatalf("the random plans gave %d unsafe and %d safe steps; both kinds are needed", unsafe, safe)
	}
	t.Logf("%d unsafe and %d safe steps agree with the reference", unsafe, safe)
}

// updnAt routes g with Up*/Down* from root switch s.
func updnAt(t testing.TB, g *fabric.Graph, s int32) *lft.Routing {
	t.Helper()
	guid := fmt.Sprintf("0x%016x", g.F.Nodes[g.Switches[s]].GUID)
	return routeWith(t, g, "updn", routing.Options{MaxVLs: 1, Root: guid})
}

// Plans and reports do not depend on the number of workers, and repeated
// runs agree.
func TestDeterminism(t *testing.T) {
	tp, err := topo.Dragonfly(2, 4, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	g0 := compile(t, tp, nil)
	old := routeWith(t, g0, "nue", routing.Options{MaxVLs: 4})
	g := failLinks(t, tp, 0.04, 3)
	new := routeWith(t, g, "nue", routing.Options{MaxVLs: 4})
	var firstPlan *Plan
	var firstRep string
	for _, w := range []int{1, 3, 1, 2} {
		opt := Options{MaxVLs: 6, AllowReorder: true, Workers: w}
		p := build(t, g, old, new, opt)
		rep := verify(t, g, old, new, p, opt).String()
		if firstPlan == nil {
			firstPlan, firstRep = p, rep
			continue
		}
		if !reflect.DeepEqual(p, firstPlan) {
			t.Fatalf("workers %d: a different plan", w)
		}
		if rep != firstRep {
			t.Fatalf("workers %d: a different report:\n%s\nvs\n%s", w, rep, firstRep)
		}
	}
	// The unsafe one-shot plan's report (examples, cycles) is stable too.
	one := OneShot(mustDiff(t, g, old, new))
	a := verify(t, g, old, new, one, Options{MaxVLs: 6, Workers: 1}).String()
	b := verify(t, g, old, new, one, Options{MaxVLs: 6, Workers: 4}).String()
	if a != b {
		t.Fatalf("one-shot report depends on workers:\n%s\nvs\n%s", a, b)
	}
}

// Bad input gives errors, never a panic: malformed plans are reported as
// ErrPlanShape, routings of another fabric and bad options are rejected.
func TestBadInput(t *testing.T) {
	g, old, new := ringReroute(t)
	ctx := context.Background()
	good := build(t, g, old, new, Options{MaxVLs: 1})
	first := func() LFTWrite {
		for _, s := range good.Steps {
			if len(s.LFT) > 0 {
				return s.LFT[0]
			}
		}
		t.Fatal("plan writes nothing")
		return LFTWrite{}
	}()
	wr := func(w LFTWrite) Step { return Step{Kind: Write, LFT: []LFTWrite{w}} }
	cases := map[string][]Step{
		"write twice":       {wr(first), wr(first)},
		"wrong old value":   {wr(LFTWrite{Switch: first.Switch, LID: first.LID, Old: first.Old + 1, New: first.New})},
		"switch range":      {wr(LFTWrite{Switch: 99, LID: 1})},
		"negative switch":   {wr(LFTWrite{Switch: -3, LID: 1})},
		"LID range":         {wr(LFTWrite{Switch: 0, LID: 1 << 20})},
		"write in barrier":  {{Kind: Barrier, LFT: []LFTWrite{first}}},
		"unknown kind":      {{Kind: 9}},
		"SL out of range":   {{Kind: Write, SL: []lft.SLChange{{DLID: 1, Src: -1, New: 200}}}},
		"SL bad source":     {{Kind: Write, SL: []lft.SLChange{{DLID: 1, Src: -7, New: 1}}}},
		"SL2VL bad switch":  {{Kind: Write, SL2VL: []lft.SL2VLDelta{{Switch: 42, Entries: 1}}}},
		"SL2VL bad table":   {{Kind: Write, SL2VL: []lft.SL2VLDelta{{Switch: 0, Entries: 1, Table: &lft.PortSL2VL{NPorts: 1, VL: []uint8{1}}}}}},
		"pause not resumed": {{Kind: Pause, Paused: []Paused{{DLID: 1, Sources: []int32{0}}}}},
		"resume alone":      {{Kind: Resume, Paused: []Paused{{DLID: 1, Sources: []int32{0}}}}},
		"not at new tables": {},
	}
	for name, steps := range cases {
		rep, err := Verify(ctx, g, old, new, &Plan{Steps: steps}, Options{MaxVLs: 1})
		if !errors.Is(err, ErrPlanShape) || rep == nil || len(rep.Shape) == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	tp, err := topo.Ring(5, 1, nil)
	h := compile(t, tp, err)
	other := treeRouting(t, h, "other", cut(h, 0, 4))
	if _, err := Build(ctx, g, old, other, Options{}); err == nil {
		t.Error("routing of another fabric accepted by Build")
	}
	if _, err := Verify(ctx, g, other, new, good, Options{}); err == nil {
		t.Error("routing of another fabric accepted by Verify")
	}
	for _, o := range []Options{{MaxVLs: 16}, {MaxVLs: -1}, {Workers: -1}, {MaxExhaustive: 30}} {
		if _, err := Build(ctx, g, old, new, o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	if _, err := Build(ctx, g, old, nil, Options{}); err == nil {
		t.Error("nil routing accepted")
	}
	if _, err := Verify(ctx, g, old, new, nil, Options{}); err == nil {
		t.Error("nil plan accepted")
	}
	// Unsafe new tables cannot be planned for.
	loop := new.Clone()
	loop.SetPort(0, 1, loop.Port(1, 1)) // r0 and r1 now point at each other for LID 1 (or at a dead end)
	if _, err := Build(ctx, g, old, loop, Options{MaxVLs: 1}); !errors.Is(err, ErrUnsafeTables) {
		t.Errorf("unsafe new tables: %v", err)
	}
}
