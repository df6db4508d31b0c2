package cdg_test

import (
	"context"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// Benchmark fixtures, routed once with MinHop: the 3-level fat tree k=12
// (432 switches, 1,728 hosts) and the 8×8×8 torus with 4 hosts a switch.
var verifyBench struct {
	once sync.Once
	g    map[string]*fabric.Graph
	r    map[string]*lft.Routing
	err  error
}

func verifyFixture(b *testing.B, name string) (*fabric.Graph, *lft.Routing) {
	b.Helper()
	verifyBench.once.Do(func() {
		verifyBench.g, verifyBench.r = map[string]*fabric.Graph{}, map[string]*lft.Routing{}
		add := func(name string, tp *topo.Topology, err error) {
			if err == nil {
				var g *fabric.Graph
				if g, err = fabric.Compile(tp.Fabric); err == nil {
					verifyBench.g[name] = g
					verifyBench.r[name], err = routing.MinHop{}.Route(context.Background(), g, routing.Options{})
				}
			}
			if err != nil && verifyBench.err == nil {
				verifyBench.err = err
			}
		}
		tp, err := topo.FatTree(12, 3, 0)
		add("fattree12-3", tp, err)
		tp, err = topo.Torus([]int{8, 8, 8}, 4, false)
		add("torus8x8x8", tp, err)
	})
	if verifyBench.err != nil {
		b.Fatal(verifyBench.err)
	}
	return verifyBench.g[name], verifyBench.r[name]
}

func benchVerify(b *testing.B, name string, opt cdg.Options) {
	g, r := verifyFixture(b, name)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// MinHop's torus tables and its switch paths on the fat tree
		// deadlock: the report is complete all the same.
		rep, err := cdg.Verify(g, r, opt)
		if rep == nil || rep.Delivered != rep.Pairs {
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

// The metrics walk the same tables with the same walker (lft.Walker).
func benchMeasure(b *testing.B, name string) {
	g, r := verifyFixture(b, name)
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
