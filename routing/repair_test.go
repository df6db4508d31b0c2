package routing_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	_ "github.com/nuesm/nuesm/dfsssp" // registers "dfsssp"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
	_ "github.com/nuesm/nuesm/nue" // registers "nue"
	"github.com/nuesm/nuesm/routing"
	_ "github.com/nuesm/nuesm/sar" // registers "sar-nue", "sar-dfsssp"
	"github.com/nuesm/nuesm/topo"
)

// repairCase is one routed fabric and one failure.
type repairCase struct {
	g0, g1 *fabric.Graph
	old    *lft.Routing
	used   int // entries of old that lead into the failed cables
	what   string
}

// routeFor routes g0 with engine at vls VLs and checks the result.
func routeFor(t testing.TB, g0 *fabric.Graph, engine string, vls int) (*lft.Routing, routing.Engine, error) {
	t.Helper()
	e, err := routing.Lookup(engine)
	if err != nil {
		t.Fatal(err)
	}
	opt := routing.Options{MaxVLs: vls}
	if engine == "sar-nue" || engine == "sar-dfsssp" {
		opt.Jobs = []routing.Job{{ID: "1", Terms: []int32{0, 1, 2, int32(len(g0.Terms) - 1)}}}
	}
	old, err := e.Route(context.Background(), g0, opt)
	if err != nil {
		return nil, e, err
	}
	if _, err := routing.Verify(g0, old, e, routing.Options{MaxVLs: vls}); err != nil {
		return nil, e, fmt.Errorf("the routing before the failure fails verification: %w", err)
	}
	return old, e, nil
}

// failed applies spec to tp and counts the entries of old (for tp) that
// lead into a cable the failure removed, towards LIDs still answered.
func failed(t testing.TB, tp *topo.Topology, g0 *fabric.Graph, old *lft.Routing, spec topo.FailureSpec) repairCase {
	t.Helper()
	f1, fails, err := topo.InjectFailures(tp.Fabric, spec)
	if err != nil {
		t.Fatal(err)
	}
	g1, err := fabric.Compile(f1)
	if err != nil {
		t.Fatal(err)
	}
	rc := repairCase{g0: g0, g1: g1, old: old, what: fmt.Sprintf("%v", fails)}
	alive := liveSwitches(g0, g1)
	for s := int32(0); int(s) < g0.NumSwitches(); s++ {
		s1 := alive[s]
		if s1 < 0 {
			continue
		}
		for lid := 1; lid <= g0.MaxLID(); lid++ {
			if sw, term := g1.Owner(lid); sw < 0 && (term < 0 || g1.Terms[term].Switch < 0) {
				continue // nobody to reach any more
			}
			p := old.Port(s, lid)
			if p != lft.NoPort && p != 0 && g0.ChannelAt(s, p) >= 0 && g1.ChannelAt(s1, p) < 0 {
				rc.used++
			}
		}
	}
	return rc
}

// liveSwitches maps g0's switches to g1's by GUID (-1: gone).
func liveSwitches(g0, g1 *fabric.Graph) []int32 {
	at := map[uint64]int32{}
	for s, id := range g1.Switches {
		at[g1.F.Nodes[id].GUID] = int32(s)
	}
	out := make([]int32, g0.NumSwitches())
	for s, id := range g0.Switches {
		s1, ok := at[g0.F.Nodes[id].GUID]
		out[s] = -1
		if ok {
			out[s] = s1
		}
	}
	return out
}

// changed counts the entries of r (for g1) that differ from old (for g0)
// at the same switch, over the LIDs g1 answers; a switch g0 lacks, or a
// LID beyond old's tables, counts its entries that hold a route.
func changed(g0, g1 *fabric.Graph, old, r *lft.Routing) int {
	back := liveSwitches(g1, g0)
	n := 0
	for s := int32(0); int(s) < g1.NumSwitches(); s++ {
		for lid := 1; lid <= g1.MaxLID(); lid++ {
			was := lft.NoPort
			if back[s] >= 0 && lid <= old.MaxLID() {
				was = old.Port(back[s], lid)
			}
			if r.Port(s, lid) != was {
				n++
			}
		}
	}
	return n
}

// checkRepair runs Repair on rc and checks what it returns: either
// ErrNoRepair, or tables that pass the verifier the daemon uses, change
// at most 5× the entries that used the failed cables (none when none
// did), report the change they made, and come out the same twice.
//
// The second repair starts from vst, the verifier's State of rc.old (nil:
// none), and must give the same tables walking fewer destinations where
// it applies; fromState says whether it did.
func checkRepair(t *testing.T, rc repairCase, e routing.Engine, vls int, vst *cdg.State) (st routing.RepairStats, fromState bool, err error) {
	t.Helper()
	r, st, err := routing.Repair(context.Background(), rc.g1, rc.old)
	if err != nil {
		if !errors.Is(err, routing.ErrNoRepair) {
			t.Fatalf("%s: %v", rc.what, err)
		}
		if _, _, err2 := routing.RepairWith(context.Background(), rc.g1, rc.old, routing.RepairOptions{State: vst}); !errors.Is(err2, routing.ErrNoRepair) {
			t.Errorf("%s: from the State: %v, without: %v", rc.what, err2, err)
		}
		return st, false, err
	}
	if rep, err := routing.Verify(rc.g1, r, e, routing.Options{MaxVLs: vls}); err != nil {
		t.Fatalf("%s: repaired tables fail verification: %v\n%v", rc.what, err, rep)
	}
	n := changed(rc.g0, rc.g1, rc.old, r)
	if n != st.Changed || n > 5*rc.used {
		t.Errorf("%s: %d entries changed (stats say %d), %d used the failed cables", rc.what, n, st.Changed, rc.used)
	}
	r2, st2, err := routing.RepairWith(context.Background(), rc.g1, rc.old, routing.RepairOptions{State: vst})
	if err != nil || !lft.Equal(r, r2) {
		t.Errorf("%s: a second repair (from the State: %v) differs (%v)", rc.what, vst != nil, err)
	}
	fromState = st2.Walked < st.Walked
	st2.Walked = st.Walked
	if st2 != st {
		t.Errorf("%s: a second repair (from the State: %v) reports %+v, the first %+v", rc.what, vst != nil, st2, st)
	}
	return st, fromState, nil
}

// TestRepairRandomFailures: single cable, single switch and triple cable
// failures on fat trees, tori, meshes, random fabrics and dragonflies,
// routed by the engines whose tables Repair accepts. Every repaired
// routing passes the verifier (cdg.Verify: every pair delivered, no loop,
// an acyclic CDG per VL within the limit) and changes at most 5× the
// entries that used the failure. Nue's and DFSSSP's routings are repaired
// for every failure.
func TestRepairRandomFailures(t *testing.T) {
	engines := []string{"nue", "dfsssp", "sar-nue", "sar-dfsssp", "lash", "updn", "minhop", "ftree"}
	complete := map[string]bool{"nue": true, "dfsssp": true}
	seeds := uint64(8)
	if testing.Short() {
		seeds = 3
	}
	for _, fb := range enginetest.RepairFabrics {
		tp, g0 := fb.Build(t)
		for _, engine := range engines {
			t.Run(fb.Name+"/"+engine, func(t *testing.T) {
				old, e, err := routeFor(t, g0, engine, fb.VLs)
				if err != nil {
					t.Skipf("%s does not route %s: %v", engine, fb.Name, err)
				}
				fails, tries, changedSum, usedSum, fromState := 0, 0, 0, 0, 0
				_, vst, _ := routing.VerifyState(g0, old, e, routing.Options{MaxVLs: fb.VLs}, nil)
				for seed := uint64(1); seed <= seeds; seed++ {
					for _, spec := range []topo.FailureSpec{{Links: 1, Seed: seed}, {Switches: 1, Seed: seed}, {Links: 3, Seed: seed}} {
						rc := failed(t, tp, g0, old, spec)
						tries++
						st, used, err := checkRepair(t, rc, e, fb.VLs, vst)
						if used {
							fromState++
						}
						if err != nil {
							fails++
							t.Logf("%s: %v", rc.what, err)
							if complete[engine] {
								t.Errorf("%s: %s's routing not repaired", rc.what, engine)
							}
							continue
						}
						changedSum += st.Changed
						usedSum += rc.used
					}
				}
				t.Logf("%d of %d failures repaired; %d entries changed where %d used the failures; %d repaired from the verifier's State",
					tries-fails, tries, changedSum, usedSum, fromState)
				if complete[engine] && fromState == 0 {
					t.Errorf("no repair started from the verifier's State")
				}
			})
		}
	}
}

// TestRepairUnchangedFabric: nothing broken, nothing changed.
func TestRepairUnchangedFabric(t *testing.T) {
	tp, _ := topo.FatTree(4, 3, 0)
	g, _ := fabric.Compile(tp.Fabric)
	for _, engine := range []string{"nue", "dfsssp"} {
		old, _, err := routeFor(t, g, engine, 4)
		if err != nil {
			t.Fatal(err)
		}
		r, st, err := routing.Repair(context.Background(), g, old)
		if err != nil || st.Changed != 0 || !lft.Equal(r, old) {
			t.Fatalf("%s: repair of an intact fabric: %v, %+v", engine, err, st)
		}
	}
}

// TestRepairRefuses: tables whose VLs Repair cannot reason about are
// refused with ErrNoRepair, never repaired blindly.
func TestRepairRefuses(t *testing.T) {
	tp, _ := topo.Torus([]int{4, 4}, 1, false)
	g0, _ := fabric.Compile(tp.Fabric)
	old, _, err := routeFor(t, g0, "dor", 4) // per-port SL2VL (datelines)
	if err != nil {
		t.Fatal(err)
	}
	if old.SL2VL.Uniform() {
		t.Fatal("dor's torus routing has uniform SL2VL tables; pick another refusal case")
	}
	rc := failed(t, tp, g0, old, topo.FailureSpec{Links: 1, Seed: 1})
	if _, _, err := routing.Repair(context.Background(), rc.g1, old); !errors.Is(err, routing.ErrNoRepair) {
		t.Fatalf("per-port SL2VL: %v, want ErrNoRepair", err)
	}
	other, _ := topo.Torus([]int{4, 4}, 1, true) // another fabric: other GUIDs
	og, _ := fabric.Compile(other.Fabric)
	for i := range og.F.Nodes {
		og.F.Nodes[i].GUID ^= 0xabcdef
	}
	uniform := old.Clone()
	uniform.SL2VL = lft.SL2VL{Default: lft.IdentitySL2VL()}
	if _, _, err := routing.Repair(context.Background(), og, uniform); !errors.Is(err, routing.ErrNoRepair) || !strings.Contains(err.Error(), "tables for 0 of") {
		t.Fatalf("tables of another fabric: %v, want ErrNoRepair", err)
	}
	pair := uniform
	pair.SL.Pair = map[uint32]uint8{1<<16 | 2: 1}
	if _, _, err := routing.Repair(context.Background(), rc.g1, pair); !errors.Is(err, routing.ErrNoRepair) {
		t.Fatalf("per-pair SLs: %v, want ErrNoRepair", err)
	}
}

// TestRepairReturns: the failed cable or switch comes back. Repair
// without the fabric before knows no new cable (the tables stay as they
// are, but a returned switch gets a table); with it, the returned cable
// takes the traffic whose paths it shortens. Every result verifies; for a
// cable, every entry changed leads into it, the changes stay within 5× the
// entries that used it before it failed, and no path gets longer.
func TestRepairReturns(t *testing.T) {
	for _, fb := range enginetest.RepairFabrics {
		tp, g0 := fb.Build(t)
		for _, engine := range []string{"nue", "dfsssp"} {
			t.Run(fb.Name+"/"+engine, func(t *testing.T) {
				old, e, err := routeFor(t, g0, engine, fb.VLs)
				if err != nil {
					t.Skipf("%s does not route %s: %v", engine, fb.Name, err)
				}
				for seed := uint64(1); seed <= 4; seed++ {
					for _, spec := range []topo.FailureSpec{{Links: 1, Seed: seed}, {Switches: 1, Seed: seed}} {
						checkReturn(t, failed(t, tp, g0, old, spec), e, fb.VLs, spec.Links > 0)
					}
				}
			})
		}
	}
}

// checkReturn repairs rc's failure, then brings the fabric back (see
// TestRepairReturns).
func checkReturn(t *testing.T, rc repairCase, e routing.Engine, vls int, cable bool) {
	t.Helper()
	ctx := context.Background()
	r1, _, err := routing.Repair(ctx, rc.g1, rc.old)
	if err != nil {
		t.Fatalf("%s: %v", rc.what, err)
	}
	same, st, err := routing.Repair(ctx, rc.g0, r1)
	if err != nil || (cable && (!lft.Equal(same, r1) || st.Changed != 0)) {
		t.Fatalf("%s: back without the fabric before: %v, %+v", rc.what, err, st)
	}
	r2, st, err := routing.RepairWith(ctx, rc.g0, r1, routing.RepairOptions{Before: rc.g1})
	if err != nil {
		t.Fatalf("%s: back: %v", rc.what, err)
	}
	if rep, err := routing.Verify(rc.g0, r2, e, routing.Options{MaxVLs: vls}); err != nil {
		t.Fatalf("%s: back: tables fail verification: %v\n%v", rc.what, err, rep)
	}
	n := changed(rc.g1, rc.g0, r1, r2)
	h1, h2 := meanHops(rc.g1, r1), meanHops(rc.g0, r2)
	t.Logf("%s: back: %d entries changed (%d moved onto returned cables), %d used them before; mean hops %.4f -> %.4f (before the failure %.4f)",
		rc.what, n, st.Improved, rc.used, h1, h2, meanHops(rc.g0, rc.old))
	if n != st.Changed {
		t.Errorf("%s: back: %d entries changed, stats say %d", rc.what, n, st.Changed)
	}
	if !cable {
		// A returned switch needs a table of its own; every other change
		// stays within the bound.
		row := rc.g0.MaxLID()
		if n-row > 5*rc.used {
			t.Errorf("%s: back: %d entries changed besides the returned switch's table, %d used it before", rc.what, n-row, rc.used)
		}
		return
	}
	if n != st.Improved || n > 5*rc.used || h2 > h1 {
		t.Errorf("%s: back: %d entries changed (%d improved), %d used the cable before; mean hops %.4f -> %.4f", rc.what, n, st.Improved, rc.used, h1, h2)
	}
	for s := int32(0); int(s) < rc.g0.NumSwitches(); s++ {
		for lid := 1; lid <= rc.g0.MaxLID(); lid++ {
			if p := r2.Port(s, lid); p != r1.Port(s, lid) && (rc.g1.ChannelAt(s, p) >= 0 || rc.g0.ChannelAt(s, p) < 0) {
				t.Fatalf("%s: back: switch %s, LID %d: port %d is no returned cable", rc.what, rc.g0.SwitchName(s), lid, p)
			}
		}
	}
}

// meanHops is the mean number of switch-to-switch hops over the (source
// terminal, destination LID) pairs that r delivers on g.
func meanHops(g *fabric.Graph, r *lft.Routing) float64 {
	var sum, n float64
	for s := int32(0); int(s) < g.NumSwitches(); s++ {
		terms := float64(len(g.TermsOf(s)))
		if terms == 0 {
			continue
		}
		for lid := 1; lid <= g.MaxLID(); lid++ {
			sw, term := g.Owner(lid)
			if term >= 0 {
				sw = g.Terms[term].Switch
			}
			if sw < 0 {
				continue
			}
			x, h := s, 0
			for ; x != sw && h <= g.NumSwitches(); h++ {
				c := g.ChannelAt(x, r.Port(x, lid))
				if c < 0 {
					break
				}
				x = g.Head[c]
			}
			if x == sw {
				sum += terms * float64(h)
				n += terms
			}
		}
	}
	return sum / n
}

var _ = cdg.Verify

// TestRepairGarbage: tables with random entries and SLs, cut SL tables
// and a cancelled context give an error or tables, never a panic; tables
// Repair returns from garbage are not promised safe (the caller verifies).
func TestRepairGarbage(t *testing.T) {
	tp, _ := topo.Torus([]int{3, 3}, 1, false)
	g0, _ := fabric.Compile(tp.Fabric)
	for _, engine := range []string{"nue", "dfsssp"} {
		old, _, err := routeFor(t, g0, engine, 4)
		if err != nil {
			t.Fatal(err)
		}
		rc := failed(t, tp, g0, old, topo.FailureSpec{Links: 1, Seed: 1})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, _, err := routing.Repair(ctx, rc.g1, old); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancelled: %v", engine, err)
		}
		short := old.Clone()
		short.SL.ByDest = short.SL.ByDest[:3]
		if _, _, err := routing.Repair(context.Background(), rc.g1, short); !errors.Is(err, routing.ErrNoRepair) {
			t.Fatalf("%s: cut SL table: %v", engine, err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		for it := 0; it < 50; it++ {
			bad := old.Clone()
			for range 1 + rng.IntN(20) {
				s := int32(rng.IntN(g0.NumSwitches()))
				bad.SetPort(s, rng.IntN(bad.Stride), uint8(rng.IntN(256)))
				bad.SL.ByDest[rng.IntN(bad.Stride)] = uint8(rng.IntN(256))
				if bad.SL.BySrc != nil {
					bad.SL.BySrc[rng.IntN(len(bad.SL.BySrc))] = uint8(rng.IntN(256))
				}
			}
			_, _, _ = routing.Repair(context.Background(), rc.g1, bad)
			_, _, _ = routing.RepairWith(context.Background(), rc.g0, bad, routing.RepairOptions{Before: rc.g1})
		}
	}
}

// TestRepairWorkers: the scan runs on GOMAXPROCS goroutines; the result
// does not depend on how many.
func TestRepairWorkers(t *testing.T) {
	fb := enginetest.RepairFabrics[3]
	tp, g0 := fb.Build(t)
	for _, engine := range []string{"nue", "dfsssp"} {
		old, _, err := routeFor(t, g0, engine, fb.VLs)
		if err != nil {
			t.Fatal(err)
		}
		rc := failed(t, tp, g0, old, topo.FailureSpec{Links: 2, Seed: 3})
		var want *lft.Routing
		for _, procs := range []int{1, 2, 5} {
			prev := runtime.GOMAXPROCS(procs)
			r, _, err := routing.Repair(context.Background(), rc.g1, old)
			runtime.GOMAXPROCS(prev)
			if err != nil {
				t.Fatalf("%s, %d procs: %v", engine, procs, err)
			}
			if want == nil {
				want = r
			} else if !lft.Equal(r, want) {
				t.Fatalf("%s: %d procs give other tables than 1", engine, procs)
			}
		}
	}
}
