package cdg_test

import (
	"context"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
	_ "github.com/nuesm/nuesm/nue" // registers "nue"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// verifyBenchFixture is a routed benchmark fabric, built once per process
// when a benchmark first asks for it.
type verifyBenchFixture struct {
	once sync.Once
	g    *fabric.Graph
	r    *lft.Routing
	e    routing.Engine
	err  error
}

// Benchmark fixtures: the 3-level fat tree k=12 (432 switches, 1,728
// hosts) and the 8×8×8 torus with 4 hosts a switch, routed with MinHop;
// the 3-level fat tree k=18 (972 switches, 5,832 hosts), the radix-36
// 3-level Clos (1,620 switches, 11,664 hosts) and the random fabric of
// bench/opensm (128 switches of degree 4, 8 hosts each, seed 1), routed
// with Nue at 8 VLs as the daemon routes them.
var verifyBench = map[string]*verifyBenchFixture{
	"fattree12-3": {}, "torus8x8x8": {}, "fattree18-3-nue8": {}, "clos36-3-nue8": {}, "random128-h8-nue8": {},
}

func buildVerifyFixture(name string) (*topo.Topology, string, int, error) {
	switch name {
	case "fattree12-3":
		tp, err := topo.FatTree(12, 3, 0)
		return tp, "minhop", 0, err
	case "torus8x8x8":
		tp, err := topo.Torus([]int{8, 8, 8}, 4, false)
		return tp, "minhop", 0, err
	case "fattree18-3-nue8":
		tp, err := topo.FatTree(18, 3, 0)
		return tp, "nue", 8, err
	case "clos36-3-nue8":
		tp, err := topo.Clos3(36)
		return tp, "nue", 8, err
	default: // random128-h8-nue8
		tp, err := topo.Random(128, 4, 8, 1)
		return tp, "nue", 8, err
	}
}

func verifyFixture(b *testing.B, name string) (*fabric.Graph, *lft.Routing, routing.Engine) {
	b.Helper()
	fx := verifyBench[name]
	fx.once.Do(func() {
		tp, engine, vls, err := buildVerifyFixture(name)
		if err == nil {
			fx.g, err = fabric.Compile(tp.Fabric)
		}
		if err == nil {
			fx.e, err = routing.Lookup(engine)
		}
		if err == nil {
			fx.r, err = fx.e.Route(context.Background(), fx.g, routing.Options{MaxVLs: vls})
		}
		fx.err = err
	})
	if fx.err != nil {
		b.Fatal(fx.err)
	}
	return fx.g, fx.r, fx.e
}

func benchVerify(b *testing.B, name string, opt cdg.Options) {
	g, r, _ := verifyFixture(b, name)
	b.ReportAllocs()
	b.ResetTimer()
	defer enginetest.ReportCPU(b, enginetest.CPUTime())
	for b.Loop() {
		// MinHop's torus tables and its switch paths on the fat tree
		// deadlock: the report is complete all the same.
		rep, err := cdg.Verify(g, r, opt)
		if rep == nil || rep.Delivered != rep.Pairs {
			b.Fatal(err)
		}
	}
}

// benchVerifyDaemon verifies as the daemon and nuesm route do
// (routing.Verify with the engine's options, every core).
func benchVerifyDaemon(b *testing.B, name string) {
	g, r, e := verifyFixture(b, name)
	opt := routing.Options{MaxVLs: r.NumVLs}
	b.ReportAllocs()
	b.ResetTimer()
	defer enginetest.ReportCPU(b, enginetest.CPUTime())
	for b.Loop() {
		if _, err := routing.Verify(g, r, e, opt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify_FatTree3_k12(b *testing.B) {
	benchVerify(b, "fattree12-3", cdg.Options{Workers: 1})
}
func BenchmarkVerify_FatTree3_k12_Switches(b *testing.B) {
	benchVerify(b, "fattree12-3", cdg.Options{Workers: 1, SwitchSources: true})
}
func BenchmarkVerify_Torus8x8x8(b *testing.B) {
	benchVerify(b, "torus8x8x8", cdg.Options{Workers: 1})
}
func BenchmarkVerify_FatTree3_k12_Parallel(b *testing.B) {
	benchVerify(b, "fattree12-3", cdg.Options{})
}
func BenchmarkVerify_FatTree3_k18_Nue8(b *testing.B) {
	benchVerify(b, "fattree18-3-nue8", cdg.Options{Workers: 1, SwitchDelivery: true})
}
func BenchmarkVerify_FatTree3_k18_Nue8_Daemon(b *testing.B) {
	benchVerifyDaemon(b, "fattree18-3-nue8")
}
func BenchmarkVerify_Clos3_r36_Nue8(b *testing.B) {
	benchVerify(b, "clos36-3-nue8", cdg.Options{Workers: 1, SwitchDelivery: true})
}
func BenchmarkVerify_Clos3_r36_Nue8_Daemon(b *testing.B) {
	benchVerifyDaemon(b, "clos36-3-nue8")
}
func BenchmarkVerify_Random128_h8_Nue8(b *testing.B) {
	benchVerify(b, "random128-h8-nue8", cdg.Options{Workers: 1, SwitchDelivery: true})
}
func BenchmarkVerify_Random128_h8_Nue8_Daemon(b *testing.B) {
	benchVerifyDaemon(b, "random128-h8-nue8")
}

// The metrics walk the same tables with the same walker (lft.Walker).
func benchMeasure(b *testing.B, name string) {
	g, r, _ := verifyFixture(b, name)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := routing.Measure(g, r, 1); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMeasure_FatTree3_k12(b *testing.B) { benchMeasure(b, "fattree12-3") }
func BenchmarkMeasure_Torus8x8x8(b *testing.B)   { benchMeasure(b, "torus8x8x8") }
