package routing_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// repairBench is a routed fabric and the failures the benchmark repairs.
type repairBench struct {
	tp    *topo.Topology
	g0    *fabric.Graph
	old   *lft.Routing
	e     routing.Engine
	vls   int
	cases []repairCase
	names []string
	hops0 float64 // mean hops before the failure
}

var (
	repairBenchMu sync.Mutex
	repairBenchFx = map[string]*repairBench{}
)

// k18Bench routes the k=18 three-level fat tree (5,832 hosts, 972
// switches) with engine at 8 VLs, once per process, and draws cable
// failures (seeds 1..links) and switch failures (seeds 1..switches; only
// switches whose loss cuts off no host: a leaf switch takes its hosts
// with it, and nothing routes to them any more).
func k18Bench(b *testing.B, engine string, links, switches int) *repairBench {
	repairBenchMu.Lock()
	defer repairBenchMu.Unlock()
	if fx, ok := repairBenchFx[engine]; ok {
		return fx
	}
	tp, err := topo.FatTree(18, 3, 0)
	if err != nil {
		b.Fatal(err)
	}
	g0, err := fabric.Compile(tp.Fabric)
	if err != nil {
		b.Fatal(err)
	}
	fx := &repairBench{tp: tp, g0: g0, vls: 8}
	if fx.old, fx.e, err = routeFor(b, g0, engine, fx.vls); err != nil {
		b.Fatal(err)
	}
	for seed := uint64(1); seed <= uint64(links); seed++ {
		fx.cases = append(fx.cases, failed(b, tp, g0, fx.old, topo.FailureSpec{Links: 1, Seed: seed}))
		fx.names = append(fx.names, fmt.Sprintf("link-seed=%d", seed))
	}
	for seed := uint64(1); seed <= uint64(switches); seed++ {
		fx.cases = append(fx.cases, failed(b, tp, g0, fx.old, topo.FailureSpec{Switches: 1, Seed: seed, SkipCritical: true}))
		fx.names = append(fx.names, fmt.Sprintf("switch-seed=%d", seed))
	}
	fx.hops0 = meanHops(g0, fx.old)
	repairBenchFx[engine] = fx
	return fx
}

// BenchmarkRepair_FatTree3_k18 times, in one process, a full Nue routing
// of the k=18 fat tree after a cable failed and Repair of the routing
// from before the failure, for five cable and two switch failures; then
// the verifier on a repaired routing, and the repair when the cable comes
// back (RepairWith, Before); then the same for DFSSSP (full routing, three
// cable failures). The rows verify-state (the full verification that
// keeps a cdg.State, as the daemon verifies a full routing),
// verify-incremental (cdg.State.Verify of the repair), repair-state
// (RepairWith from the State) and repair+verify (both, as the daemon
// runs them after every failure) time the daemon's path, and
// repair+verify-back its path when the failed part comes back (the full
// routing from before repaired from its State for the whole fabric, and
// verified against it). Metrics: CPU time per op, entries changed, entries
// that used the failed cable or switch (minimal change: changed <= 5x
// used), mean switch hops of the terminal paths. bench/repair/run.sh
// turns the output into bench/repair/RESULTS.md. It takes minutes: run it
// by name.
func BenchmarkRepair_FatTree3_k18(b *testing.B) {
	fx := k18Bench(b, "nue", 5, 2)
	b.Run("full-nue", func(b *testing.B) { benchFull(b, fx) })
	repaired := make([]*lft.Routing, len(fx.cases))
	for k := range fx.cases {
		b.Run("repair/"+fx.names[k], func(b *testing.B) { repaired[k] = benchRepair(b, fx, k) })
	}
	b.Run("verify/"+fx.names[0], func(b *testing.B) { benchVerify(b, fx, repaired[0]) })
	// The daemon keeps the State of the published routing (verified in
	// full, with counts: verify-state) and verifies a repair against it.
	sb := &stateBench{fx: fx, vopt: routing.VerifyOptions(fx.e, routing.Options{MaxVLs: fx.vls})}
	b.Run("verify-state/intact", sb.verifyState)
	b.Run("verify-incremental/"+fx.names[0], func(b *testing.B) { sb.verifyIncremental(b, repaired[0]) })
	b.Run("repair-state/"+fx.names[0], func(b *testing.B) { sb.repairState(b, repaired[0]) })
	// The daemon's path after a failure: repair from the State, then
	// verify against it.
	for k := range fx.cases {
		b.Run("repair+verify/"+fx.names[k], func(b *testing.B) {
			benchRepairVerify(b, fx, sb.state0(b), repaired[k], k)
		})
	}
	// The daemon's path when the cable or switch comes back: the fabric
	// is not the published one less some parts, but the last full
	// routing's; that routing is repaired for it from its State and
	// verified against it.
	for k := range fx.cases {
		b.Run("repair+verify-back/"+fx.names[k], func(b *testing.B) {
			if repaired[k] == nil {
				b.Skip("needs the repair/" + fx.names[k] + " row")
			}
			benchBack(b, fx, sb.state0(b), repaired[k], k)
		})
	}
	b.Run("back/"+fx.names[0], func(b *testing.B) { benchCableBack(b, fx, repaired[0]) })
	dfs := k18Bench(b, "dfsssp", 3, 0)
	b.Run("full-dfsssp", func(b *testing.B) { benchFull(b, dfs) })
	for k := range dfs.cases {
		b.Run("repair-dfsssp/"+dfs.names[k], func(b *testing.B) { benchRepair(b, dfs, k) })
	}
}

// benchVerify times the full verification of repaired, the repair of
// fx's first failure.
func benchVerify(b *testing.B, fx *repairBench, repaired *lft.Routing) {
	c0 := fx.cases[0]
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		if _, err := routing.Verify(c0.g1, repaired, fx.e, routing.Options{MaxVLs: fx.vls}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
}

// stateBench holds the State of fx's routing before the failures, made
// by the verify-state row or, when that row did not run, on first use.
type stateBench struct {
	fx   *repairBench
	vopt cdg.Options
	st0  *cdg.State
}

// state0 returns the State of the routing before the failures.
func (sb *stateBench) state0(b *testing.B) *cdg.State {
	if sb.st0 == nil {
		if _, sb.st0, _ = cdg.VerifyState(sb.fx.g0, sb.fx.old, sb.vopt); sb.st0 == nil {
			b.Fatal("no State of the routing before the failure")
		}
	}
	return sb.st0
}

// verifyState times the full verification that keeps a State.
func (sb *stateBench) verifyState(b *testing.B) {
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		var err error
		if _, sb.st0, err = cdg.VerifyState(sb.fx.g0, sb.fx.old, sb.vopt); err != nil || sb.st0 == nil {
			b.Fatalf("no State: %v", err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
}

// verifyIncremental times the verification of repaired, the repair of
// the first failure, against the State.
func (sb *stateBench) verifyIncremental(b *testing.B, repaired *lft.Routing) {
	st0, c0 := sb.state0(b), sb.fx.cases[0]
	var st *cdg.State
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		var err error
		if _, st, err = st0.Verify(c0.g1, repaired, sb.vopt); err != nil || st == nil {
			b.Fatalf("no State: %v", err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
	b.ReportMetric(float64(st.Walked()), "dests-walked")
}

// repairState times the repair of the first failure from the State; its
// tables must be repaired's (the repair without the State).
func (sb *stateBench) repairState(b *testing.B, repaired *lft.Routing) {
	st0, c0 := sb.state0(b), sb.fx.cases[0]
	var st routing.RepairStats
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		var r *lft.Routing
		var err error
		if r, st, err = routing.RepairWith(context.Background(), c0.g1, c0.old, routing.RepairOptions{State: st0}); err != nil || !lft.Equal(r, repaired) {
			b.Fatalf("repair from the State: %v, or other tables than without", err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
	b.ReportMetric(float64(st.Walked), "dests-walked")
}

// benchCableBack times the repair of repaired (the repair of fx's first
// failure) when the failed cable comes back (RepairWith, Before) and
// verifies it.
func benchCableBack(b *testing.B, fx *repairBench, repaired *lft.Routing) {
	c0 := fx.cases[0]
	var r *lft.Routing
	var st routing.RepairStats
	var err error
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		if r, st, err = routing.RepairWith(context.Background(), c0.g0, repaired, routing.RepairOptions{Before: c0.g1}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
	if _, err := routing.Verify(c0.g0, r, fx.e, routing.Options{MaxVLs: fx.vls}); err != nil {
		b.Fatalf("tables fail verification: %v", err)
	}
	b.ReportMetric(float64(st.Changed), "entries-changed")
	b.ReportMetric(float64(c0.used), "entries-used")
	b.ReportMetric(float64(changed(c0.g0, c0.g0, fx.old, r)), "entries-off-original")
	b.ReportMetric(meanHops(c0.g0, r), "hops-mean")
}

// benchFull times a full routing of fx's first failure.
func benchFull(b *testing.B, fx *repairBench) {
	c0 := fx.cases[0]
	var r *lft.Routing
	var err error
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		if r, err = fx.e.Route(context.Background(), c0.g1, routing.Options{MaxVLs: fx.vls}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
	b.ReportMetric(float64(changed(c0.g0, c0.g1, fx.old, r)), "entries-changed")
	b.ReportMetric(meanHops(c0.g1, r), "hops-mean")
	b.ReportMetric(fx.hops0, "hops-mean-before")
	b.ReportMetric(float64(c0.g1.NumSwitches()*c0.g1.MaxLID()), "entries-total")
}

// benchRepair times Repair of fx's failure k and verifies the result.
func benchRepair(b *testing.B, fx *repairBench, k int) *lft.Routing {
	rc := fx.cases[k]
	var r *lft.Routing
	var err error
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		if r, _, err = routing.Repair(context.Background(), rc.g1, rc.old); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
	if _, err := routing.Verify(rc.g1, r, fx.e, routing.Options{MaxVLs: fx.vls}); err != nil {
		b.Fatalf("repaired tables fail verification: %v", err)
	}
	b.ReportMetric(float64(changed(rc.g0, rc.g1, rc.old, r)), "entries-changed")
	b.ReportMetric(float64(rc.used), "entries-used")
	b.ReportMetric(meanHops(rc.g1, r), "hops-mean")
	return r
}

// benchRepairVerify times the daemon's path after fx's failure k: the
// check that the State st0 of the routing before covers the damaged
// fabric, the repair from st0 and its verification against st0; the
// tables must be repaired's (the repair without the State).
func benchRepairVerify(b *testing.B, fx *repairBench, st0 *cdg.State, repaired *lft.Routing, k int) {
	rc := fx.cases[k]
	vopt := routing.VerifyOptions(fx.e, routing.Options{MaxVLs: fx.vls})
	var r *lft.Routing
	var rst routing.RepairStats
	var vst *cdg.State
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		var err error
		if !st0.Covers(rc.g1) { // the daemon's check that the fabric lost parts only
			b.Fatal("the State does not cover the damaged fabric")
		}
		if r, rst, err = routing.RepairWith(context.Background(), rc.g1, rc.old, routing.RepairOptions{State: st0}); err != nil {
			b.Fatal(err)
		}
		if _, vst, err = st0.Verify(rc.g1, r, vopt); err != nil || vst == nil {
			b.Fatalf("no State: %v", err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
	if !lft.Equal(r, repaired) {
		b.Fatal("the repair from the State differs from the repair without")
	}
	b.ReportMetric(float64(rst.Walked), "repair-dests-walked")
	b.ReportMetric(float64(vst.Walked()), "verify-dests-walked")
}

// benchBack times the daemon's path when fx's failure k is undone: the
// check that the fabric gained parts the published one (repaired, the
// repair of fx.old for the failure) lacks and that the State st0 of the
// full routing covers it, the repair of fx.old from st0, and its
// verification against st0.
func benchBack(b *testing.B, fx *repairBench, st0 *cdg.State, repaired *lft.Routing, k int) {
	rc := fx.cases[k]
	vopt := routing.VerifyOptions(fx.e, routing.Options{MaxVLs: fx.vls})
	_, vst, err := st0.Verify(rc.g1, repaired, vopt)
	if err != nil || vst == nil {
		b.Fatalf("the repaired routing's State: %v", err)
	}
	var r *lft.Routing
	b.ResetTimer()
	cpu := enginetest.CPUTime()
	for i := 0; i < b.N; i++ {
		if vst.Covers(rc.g0) || !st0.Covers(rc.g0) {
			b.Fatal("the whole fabric is covered by the repaired routing's State, or not by the full routing's")
		}
		if r, _, err = routing.RepairWith(context.Background(), rc.g0, fx.old, routing.RepairOptions{State: st0}); err != nil {
			b.Fatal(err)
		}
		var next *cdg.State
		if _, next, err = st0.Verify(rc.g0, r, vopt); err != nil || next == nil {
			b.Fatalf("no State: %v", err)
		}
	}
	b.StopTimer()
	enginetest.ReportCPU(b, cpu)
	b.ReportMetric(float64(changed(rc.g1, rc.g0, repaired, r)), "entries-changed")
	b.ReportMetric(float64(rc.used), "entries-used")
	b.ReportMetric(float64(changed(rc.g0, rc.g0, fx.old, r)), "entries-off-original")
	b.ReportMetric(meanHops(rc.g0, r), "hops-mean")
}
