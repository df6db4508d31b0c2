package cdg_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	_ "github.com/nuesm/nuesm/dfsssp" // registers "dfsssp"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
	_ "github.com/nuesm/nuesm/nue" // registers "nue"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// This file compares State.Verify, the incremental verification, with a
// full cdg.Verify of the same tables on random damaged fabrics: the
// routing before the failure, its repair (routing.Repair), a full
// routing of the damaged fabric, and repairs corrupted on purpose (a
// loop, black holes, dead ends, destinations moved onto other paths and
// one VL: cycles); then a second failure on top, verified against the
// State of the first. The reports must be equal field by field.

// stateTally counts the verdicts the comparisons saw, so that the test
// can insist that it exercised each kind.
type stateTally struct {
	incremental, full, ok, loops, dead, cycles, vls, memos int
}

func TestStateVerifyMatchesFull(t *testing.T) {
	seeds := uint64(4)
	if testing.Short() {
		seeds = 2
	}
	var tally stateTally
	memos0 := cdg.MemosTaken.Load()
	for _, fb := range enginetest.RepairFabrics {
		tp, g0 := fb.Build(t)
		for _, engine := range []string{"nue", "dfsssp", "ftree"} {
			e, err := routing.Lookup(engine)
			if err != nil {
				t.Fatal(err)
			}
			r0, err := e.Route(context.Background(), g0, routing.Options{MaxVLs: fb.VLs})
			if err != nil {
				t.Logf("%s/%s: not routed: %v", fb.Name, engine, err)
				continue
			}
			for _, examples := range []int{0, 2} {
				opt := routing.VerifyOptions(e, routing.Options{MaxVLs: fb.VLs})
				opt.MaxExamples = examples
				t.Run(fmt.Sprintf("%s/%s/examples=%d", fb.Name, engine, examples), func(t *testing.T) {
					sr := &stateRun{t: t, tally: &tally, f: tp.Fabric, r0: r0, st: stateOf(t, g0, r0, opt), e: e, opt: opt}
					for seed := uint64(1); seed <= seeds; seed++ {
						for _, spec := range []topo.FailureSpec{{Links: 1, Seed: seed}, {Switches: 1, Seed: seed, SkipCritical: true}, {Links: 3, Seed: seed}} {
							sr.failure(spec)
						}
					}
				})
			}
		}
	}
	t.Logf("%+v; %d verifications took RepairBase's counts", tally, cdg.MemosTaken.Load()-memos0)
	if cdg.MemosTaken.Load()-memos0 != int64(tally.memos) {
		t.Errorf("RepairBase left %d memos, %d taken", tally.memos, cdg.MemosTaken.Load()-memos0)
	}
	if tally.incremental == 0 || tally.ok == 0 || tally.loops == 0 || tally.dead == 0 || tally.cycles == 0 {
		t.Errorf("the comparisons did not see every verdict: %+v", tally)
	}
}

// stateOf verifies r on g in full and with VerifyState, which must agree
// and keep a State of the passing routing.
func stateOf(t *testing.T, g *fabric.Graph, r *lft.Routing, opt cdg.Options) *cdg.State {
	t.Helper()
	want, werr := cdg.Verify(g, r, opt)
	got, st, err := cdg.VerifyState(g, r, opt)
	sameReport(t, "VerifyState", want, werr, got, err)
	if st == nil || st.Walked() != want.Destinations {
		t.Fatalf("VerifyState kept no State of a routing that passed (%v)", werr)
	}
	if _, again, _ := st.Verify(g, r, opt); again == nil || again.Walked() != 0 {
		t.Fatalf("the same tables again: walked %v, expected none", again)
	}
	// Every fabric here is in one piece, so the State's counts are taken
	// out by following the trees from the sources.
	if same, empty, ok := cdg.CheckSubtract(st); !ok || !same || !empty {
		t.Fatalf("following the trees from the sources (applies %v) takes other dependencies out of the counts than the verifier's walk (same %v), or leaves some once every destination is out (empty %v)", ok, same, empty)
	}
	return st
}

// stateRun is one routed fabric of the comparison: f routed by r0 with
// engine e, r0's State st, the verifier's options.
type stateRun struct {
	t     *testing.T
	tally *stateTally
	f     *fabric.Fabric
	r0    *lft.Routing
	st    *cdg.State
	e     routing.Engine
	opt   cdg.Options
}

// failure injects spec into f, repairs r0, corrupts the repair several
// ways and compares State.Verify with cdg.Verify for each, then does the
// same for a second failure against the State of the repair.
func (sr *stateRun) failure(spec topo.FailureSpec) {
	t := sr.t
	t.Helper()
	f1, fails, err := topo.InjectFailures(sr.f, spec)
	if err != nil && spec.SkipCritical {
		// Every switch has CAs: one takes its CAs with it (verified in
		// full: its LIDs leave the fabric).
		spec.SkipCritical = false
		f1, fails, err = topo.InjectFailures(sr.f, spec)
	}
	if err != nil {
		t.Fatal(err)
	}
	g1, err := fabric.Compile(f1)
	if err != nil {
		t.Fatal(err)
	}
	what := fmt.Sprintf("%v", fails)
	r1, _, err := routing.Repair(context.Background(), g1, sr.r0)
	if err != nil && !errors.Is(err, routing.ErrNoRepair) {
		t.Fatalf("%s: %v", what, err)
	}
	cands := sr.candidates(g1, r1, spec)
	var next *cdg.State
	for _, name := range []string{"full", "repair", "loop", "black-hole", "moved", "stale", "half-repaired"} {
		r := cands[name]
		if r == nil {
			continue
		}
		if sr.r0.CheckShape(g1) == nil {
			// What a repair asks first: the verification then starts
			// from the counts it leaves.
			if _, _, ok := sr.st.RepairBase(g1, sr.r0); ok {
				sr.tally.memos++
			}
		}
		st1 := sr.one(what+" "+name, g1, r, sr.st, spec.Switches == 0)
		if name == "repair" {
			next = st1
		}
	}
	if next == nil {
		return
	}
	// A second cable on top of the first, against the repair's State.
	f2, fails2, err := topo.InjectFailures(f1, topo.FailureSpec{Links: 1, Seed: spec.Seed + 100})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := fabric.Compile(f2)
	if err != nil {
		t.Fatal(err)
	}
	if r2, _, err := routing.Repair(context.Background(), g2, r1); err == nil {
		sr.one(fmt.Sprintf("%s then %v", what, fails2), g2, r2, next, true)
	}
}

// candidates returns the routings of g1 to compare: a full routing, the
// repair r1 (nil: none) and its corruptions, and the tables from before.
func (sr *stateRun) candidates(g1 *fabric.Graph, r1 *lft.Routing, spec topo.FailureSpec) map[string]*lft.Routing {
	cands := map[string]*lft.Routing{}
	if full, err := sr.e.Route(context.Background(), g1, routing.Options{MaxVLs: sr.opt.MaxVLs}); err == nil {
		cands["full"] = full
	}
	sameSwitches := sr.r0.CheckShape(g1) == nil
	if sameSwitches {
		cands["stale"] = sr.r0 // the tables from before: entries into the failure
	}
	if r1 == nil {
		return cands
	}
	rng := rand.New(rand.NewPCG(spec.Seed, uint64(spec.Links*7+spec.Switches)))
	cands["repair"] = r1
	cands["loop"] = corruptLoop(g1, r1, rng)
	cands["black-hole"] = corruptHoles(g1, r1, rng)
	cands["moved"] = corruptMoved(g1, r1, rng)
	if sameSwitches {
		cands["half-repaired"] = halfRepaired(g1, sr.r0, r1)
	}
	return cands
}

// one compares State.Verify of r on g against st with cdg.Verify and
// returns the State it keeps. incremental says the failure removes
// cables only, so the verification must go the incremental way.
func (sr *stateRun) one(what string, g *fabric.Graph, r *lft.Routing, st *cdg.State, incremental bool) *cdg.State {
	t, tally, opt := sr.t, sr.tally, sr.opt
	t.Helper()
	want, werr := cdg.Verify(g, r, opt)
	n0 := cdg.IncrementalUpdates.Load()
	got, next, err := st.Verify(g, r, opt)
	inc := cdg.IncrementalUpdates.Load() > n0
	sameReport(t, what, want, werr, got, err)
	if incremental && !inc {
		t.Errorf("%s: verified in full, expected incrementally", what)
	}
	if (next != nil) != (want != nil && want.OK()) {
		t.Errorf("%s: State kept %v, report OK %v", what, next != nil, want != nil && want.OK())
	}
	tally.add(want, inc)
	return next
}

// add counts one comparison's verdict.
func (tally *stateTally) add(want *cdg.Report, inc bool) {
	if inc {
		tally.incremental++
	} else {
		tally.full++
	}
	switch {
	case want == nil:
	case want.OK():
		tally.ok++
	default:
		if want.Loops > 0 {
			tally.loops++
		}
		if want.DeadEnds > 0 {
			tally.dead++
		}
		if want.Cycle != nil {
			tally.cycles++
		}
		if want.VLsUsed > want.VLLimit {
			tally.vls++
		}
	}
}

func sameReport(t *testing.T, what string, want *cdg.Report, werr error, got *cdg.Report, err error) {
	t.Helper()
	if fmt.Sprint(werr) != fmt.Sprint(err) {
		t.Fatalf("%s: error %v, full verification %v", what, err, werr)
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s: reports differ:\nincremental:\n%s\nfull:\n%s", what, got, want)
	}
}

// halfRepaired takes r1's entries for every other destination it
// changed and r0's for the rest (same switches: a cable failed).
func halfRepaired(g *fabric.Graph, r0, r1 *lft.Routing) *lft.Routing {
	r := r1.Clone()
	k := 0
	for d := 1; d <= g.MaxLID(); d++ {
		changed := false
		for x := range int32(g.NumSwitches()) {
			changed = changed || r0.Port(x, d) != r1.Port(x, d)
		}
		if changed {
			if k++; k%2 == 0 {
				for x := range int32(g.NumSwitches()) {
					r.SetPort(x, d, r0.Port(x, d))
				}
			}
		}
	}
	return r
}

// corruptLoop makes two neighbouring switches forward a destination to
// each other.
func corruptLoop(g *fabric.Graph, r *lft.Routing, rng *rand.Rand) *lft.Routing {
	r = r.Clone()
	for range 100 {
		d := 1 + rng.IntN(g.MaxLID())
		dsw, _, _ := lft.Target(g, d)
		x := int32(rng.IntN(g.NumSwitches()))
		if dsw < 0 || x == dsw || g.Degree(x) == 0 {
			continue
		}
		c := g.Off[x] + int32(rng.IntN(g.Degree(x)))
		if y := g.Head[c]; y != dsw {
			r.SetPort(x, d, g.OutPort[c])
			r.SetPort(y, d, g.InPort[c])
			return r
		}
	}
	return r
}

// corruptHoles drops a few entries and points a few at port 0 (the
// switch itself, for a LID that is not its own).
func corruptHoles(g *fabric.Graph, r *lft.Routing, rng *rand.Rand) *lft.Routing {
	r = r.Clone()
	for i := range 6 {
		d := 1 + rng.IntN(g.MaxLID())
		x := int32(rng.IntN(g.NumSwitches()))
		if sw, _, _ := lft.Target(g, d); sw == x {
			continue
		}
		p := lft.NoPort
		if i%2 == 1 {
			p = 0
		}
		r.SetPort(x, d, p)
	}
	return r
}

// corruptMoved sends a few destinations along random next hops that
// still reach them (random trees, as the reference test draws them),
// all on SL 0: paths that cross others' often close a cycle.
func corruptMoved(g *fabric.Graph, r *lft.Routing, rng *rand.Rand) *lft.Routing {
	r = r.Clone()
	for range 4 {
		d := 1 + rng.IntN(g.MaxLID())
		dsw, dport, _ := lft.Target(g, d)
		if dsw < 0 {
			continue
		}
		// A random spanning tree towards dsw: a BFS with shuffled
		// neighbours.
		seen := make([]bool, g.NumSwitches())
		seen[dsw] = true
		queue := []int32{dsw}
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			cs := make([]int32, 0, g.Degree(x))
			for c := g.Off[x]; c < g.Off[x+1]; c++ {
				cs = append(cs, c)
			}
			rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
			for _, c := range cs {
				if y := g.Head[c]; !seen[y] {
					seen[y] = true
					r.SetPort(y, d, g.InPort[c])
					queue = append(queue, y)
				}
			}
		}
		r.SetPort(dsw, d, dport)
		r.SL.ByDest[d] = 0
		if r.SL.BySrc != nil {
			for x := range int32(g.NumSwitches()) {
				r.SL.SrcRow(x)[d] = 0
			}
		}
	}
	return r
}
