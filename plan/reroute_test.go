package plan

import (
	"context"
	"fmt"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	_ "github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
	_ "github.com/nuesm/nuesm/sar"
	"github.com/nuesm/nuesm/topo"
)

func routeWith(t testing.TB, g *fabric.Graph, engine string, opt routing.Options) *lft.Routing {
	t.Helper()
	e, err := routing.Lookup(engine)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Route(context.Background(), g, opt)
	if err != nil {
		t.Fatalf("%s: %v", engine, err)
	}
	return r
}

// failLinks returns tp's fabric with a fraction of its switch-to-switch
// cables failed (none critical), compiled.
func failLinks(t testing.TB, tp *topo.Topology, frac float64, seed uint64) *fabric.Graph {
	t.Helper()
	f, _, err := topo.InjectFailures(tp.Fabric, topo.FailureSpec{LinkFraction: frac, Seed: seed, SkipCritical: true})
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkReroute plans old -> new on g strictly and with reordering allowed,
// proves both plans, and checks the lost pairs against cdg: the pairs the
// old tables no longer deliver on g. It returns the relaxed plan's report.
func checkReroute(t *testing.T, g *fabric.Graph, old, new *lft.Routing, vls int) *Report {
	t.Helper()
	if err := old.CheckShape(g); err != nil {
		t.Fatal(err)
	}
	crep, _ := cdg.Verify(g, old, cdg.Options{MaxVLs: vls})
	if crep == nil || crep.Loops != 0 || crep.Cycle != nil {
		t.Fatalf("old tables on the new fabric: %v", crep)
	}
	var last *Report
	for _, reorder := range []bool{false, true} {
		opt := Options{MaxVLs: vls, AllowReorder: reorder}
		p := build(t, g, old, new, opt)
		rep := verify(t, g, old, new, p, opt)
		if !rep.OK() {
			t.Fatalf("reorder=%v: plan unsafe:\n%s", reorder, rep)
		}
		if lost := crep.Pairs - crep.Delivered; rep.LostPairs != lost || p.LostPairs != lost {
			t.Fatalf("reorder=%v: %d lost pairs verified, %d planned, cdg counts %d", reorder, rep.LostPairs, p.LostPairs, lost)
		}
		if rep.Pairs != crep.Pairs {
			t.Fatalf("pairs: plan %d, cdg %d", rep.Pairs, crep.Pairs)
		}
		if !reorder && rep.ReorderPairs != 0 {
			t.Fatalf("strict plan lets %d changed pairs inject", rep.ReorderPairs)
		}
		m := p.Metrics()
		t.Logf("reorder=%v: %d steps, %d writes in %d blocks, %d drain phases, %d of %d pairs changed, %d lost, %d paused; %v",
			reorder, m.Steps, m.Writes, m.Blocks, m.DrainPhases, m.ChangedPairs, m.Pairs, m.LostPairs, m.PausedPairs, m.Strategies)
		last = rep
	}
	return last
}

// Nue-to-Nue reroutes after 1-5 % link failures: the old tables route
// around no failure, the new ones around the failures; the pairs whose old
// path crosses a failed link are lost until their entries are rewritten
// and are reported, and every plan verifies.
func TestNueRerouteAfterFailures(t *testing.T) {
	tor, err := topo.Torus([]int{4, 4, 4}, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	df, err := topo.Dragonfly(2, 4, 2, 9)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tp   *topo.Topology
	}{{"torus4x4x4", tor}, {"dragonfly", df}} {
		g0, err := fabric.Compile(c.tp.Fabric)
		if err != nil {
			t.Fatal(err)
		}
		const vls = 4
		old0 := routeWith(t, g0, "nue", routing.Options{MaxVLs: vls})
		lostAny := false
		for _, frac := range []float64{0.01, 0.03, 0.05} {
			t.Run(fmt.Sprintf("%s/%.0fpct", c.name, frac*100), func(t *testing.T) {
				g := failLinks(t, c.tp, frac, 7)
				old := old0.Clone() // link failures keep switches and LIDs
				new := routeWith(t, g, "nue", routing.Options{MaxVLs: vls})
				rep := checkReroute(t, g, old, new, vls)
				lostAny = lostAny || rep.LostPairs > 0
			})
		}
		if !lostAny {
			t.Errorf("%s: no failure hit a used link; the test proves less than it claims", c.name)
		}
	}
}

// A SAR-style reroute on a 3-level fat tree: the job set changes, sar-nue
// routes the new jobs' paths first; the plan moves the changed
// destinations safely.
func TestFatTreeSARReroute(t *testing.T) {
	tp, err := topo.FatTree(4, 3, 0)
	g := compile(t, tp, err)
	jobsA := []routing.Job{{ID: "a", Terms: span(0, 24)}, {ID: "b", Terms: span(32, 48)}}
	jobsB := []routing.Job{{ID: "c", Terms: span(8, 40)}, {ID: "d", Terms: span(48, 64)}}
	old := routeWith(t, g, "sar-nue", routing.Options{MaxVLs: 4, Jobs: jobsA})
	new := routeWith(t, g, "sar-nue", routing.Options{MaxVLs: 4, Jobs: jobsB})
	if lft.Equal(old, new) {
		t.Fatal("the job change did not change the tables")
	}
	rep := checkReroute(t, g, old, new, 4)
	if rep.LostPairs != 0 || rep.ChangedPairs == 0 {
		t.Fatalf("SAR reroute: %d lost, %d changed pairs", rep.LostPairs, rep.ChangedPairs)
	}
}

func span(lo, hi int32) []int32 {
	var out []int32
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}
