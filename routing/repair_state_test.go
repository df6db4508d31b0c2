package routing

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// TestRepairScanFromState: the CDG and the broken destinations Repair
// takes from the verifier's State (scanState) are exactly those of the
// full scan, bit for bit, after cable and switch failures, for
// per-destination SLs (Up*/Down*) and per-source SLs (LASH).
func TestRepairScanFromState(t *testing.T) {
	fabrics := []func() (*topo.Topology, error){
		func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) },
		func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 2, false) },
		func() (*topo.Topology, error) { return topo.Random(24, 4, 2, 3) },
	}
	compared := 0
	for i, mk := range fabrics {
		tp, err := mk()
		g0 := dlGraph(t, tp, err)
		for _, e := range []Engine{UpDn{}, LASH{}} {
			old, err := e.Route(context.Background(), g0, Options{MaxVLs: 8})
			if err != nil {
				t.Fatal(err)
			}
			_, vst, err := VerifyState(g0, old, e, Options{MaxVLs: 8}, nil)
			if vst == nil {
				t.Fatalf("fabric %d, %s: no State: %v", i, e.Name(), err)
			}
			for seed := uint64(1); seed <= 4; seed++ {
				for _, spec := range []topo.FailureSpec{{Links: 1, Seed: seed}, {Links: 3, Seed: seed}, {Switches: 1, Seed: seed, SkipCritical: true}} {
					f1, fails, err := topo.InjectFailures(tp.Fabric, spec)
					if err != nil {
						continue // no switch without CAs to fail
					}
					g1 := dlFabricGraph(t, f1)
					what := fmt.Sprintf("fabric %d, %s, %v", i, e.Name(), fails)
					if compareScans(t, what, g1, old, vst) {
						compared++
					}
				}
			}
		}
	}
	if compared == 0 {
		t.Fatal("the State never applied")
	}
}

// compareScans sets up a repair of old on g1 as RepairWith does and
// compares scanState with scan; it reports whether scanState applied.
func compareScans(t *testing.T, what string, g1 *fabric.Graph, old *lft.Routing, vst *cdg.State) bool {
	t.Helper()
	r, fresh, err := adopt(g1, old)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	deliverLocal(g1, r)
	rp := newRepairer(g1, r, old.MaxVL()+1, fresh, nil)
	turns, dests, err := rp.scan(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	sturns, sdests, _, ok := newRepairer(g1, r, old.MaxVL()+1, fresh, nil).scanState(vst)
	if !ok {
		if g1.NumSwitches() == len(old.Switches) && slices.Max(g1.SwitchComponents()) == 0 {
			t.Errorf("%s: the State did not apply to a cable failure", what)
		}
		return false
	}
	for vl := range turns {
		if !slices.Equal(turns[vl], sturns[vl]) {
			t.Errorf("%s: VL %d: the CDG from the State differs from the scan's", what, vl)
		}
	}
	if len(dests) != len(sdests) {
		t.Fatalf("%s: %d broken destinations from the State, %d from the scan", what, len(sdests), len(dests))
	}
	for k := range dests {
		a, b := dests[k], sdests[k]
		if a.d != b.d || a.breaks != b.breaks || !slices.Equal(a.col, b.col) || !slices.Equal(a.src, b.src) {
			t.Errorf("%s: broken destination %d: %d (%d breaks) from the State, %d (%d breaks) from the scan", what, k, b.d, b.breaks, a.d, a.breaks)
		}
	}
	return true
}
