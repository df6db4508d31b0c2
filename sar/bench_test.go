package sar

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/nue"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// BenchmarkMeasure_FatTree3_k12: SAR's metrics of MinHop's tables on the
// 3-level fat tree k=12 for six random jobs.
func BenchmarkMeasure_FatTree3_k12(b *testing.B) {
	g := fatTree12(b)
	r, err := routing.MinHop{}.Route(context.Background(), g, routing.Options{})
	if err != nil {
		b.Fatal(err)
	}
	jobs := randomJobs(g, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Measure(g, r, jobs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRoute_FatTree3_k12_Scatter: sar-nue with and without its
// spreading, and plain Nue, on the 3-level fat tree k=12 for a scattered
// job mix (seed 1), tables verified as the engine path does; CPU per
// routing in cpu-ms/op.
func BenchmarkRoute_FatTree3_k12_Scatter(b *testing.B) {
	g := fatTree12(b)
	all, err := Mix(g, MixConfig{Alloc: AllocScatter}, 1)
	if err != nil {
		b.Fatal(err)
	}
	opt := routing.Options{MaxVLs: 8, Jobs: MultiSwitch(g, all)}
	for _, e := range []routing.Engine{NueEngine{}, NueEngine{NoSpread: true}, nue.Engine{}} {
		name := e.Name()
		if s, ok := e.(NueEngine); ok && s.NoSpread {
			name += ":spread=off"
		}
		b.Run(name, func(b *testing.B) {
			start := enginetest.CPUTime()
			for b.Loop() {
				if _, err := routing.RouteChain(context.Background(), g, []routing.Engine{e}, opt); err != nil {
					b.Fatal(err)
				}
			}
			enginetest.ReportCPU(b, start)
		})
	}
}

// fatTree12 compiles the 3-level fat tree k=12.
func fatTree12(b *testing.B) *fabric.Graph {
	tp, err := topo.FatTree(12, 3, 0)
	if err != nil {
		b.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// spreadFabrics are BenchmarkSpreadAll's fabrics: the k=12 fat tree with
// 26 failed cables, the 6×6×6 torus with 2 hosts per switch and the k=18
// fat tree.
var spreadFabrics = []struct {
	name string
	make func() (*topo.Topology, error)
	fail int
}{
	{"fattree12-3-fail26", func() (*topo.Topology, error) { return topo.FatTree(12, 3, 0) }, 26},
	{"torus6x6x6", func() (*topo.Topology, error) { return topo.Torus([]int{6, 6, 6}, 2, false) }, 0},
	{"fattree18-3", func() (*topo.Topology, error) { return topo.FatTree(18, 3, 0) }, 0},
}

// spreadGraph compiles spreadFabrics[i], its cables failed.
func spreadGraph(b *testing.B, i int) *fabric.Graph {
	f := spreadFabrics[i]
	tp, err := f.make()
	if err != nil {
		b.Fatal(err)
	}
	fab := tp.Fabric
	if f.fail > 0 {
		if fab, _, err = topo.InjectFailures(fab, topo.FailureSpec{Links: f.fail, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	g, err := fabric.Compile(fab)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkSpreadAll: the spreading of every terminal's paths
// (sar-nue:spread=all without jobs) over Nue's tables at 8 VLs, the
// final verification included.
func BenchmarkSpreadAll(b *testing.B) {
	for i, f := range spreadFabrics {
		b.Run(f.name, func(b *testing.B) {
			g := spreadGraph(b, i)
			opt := routing.Options{MaxVLs: 8}
			r, err := nue.Engine{Config: nue.Config{KeepLayerVLs: true}}.Route(context.Background(), g, opt)
			if err != nil {
				b.Fatal(err)
			}
			jobs := []routing.Job{allTerminals(g)}
			vopt := routing.VerifyOptions(NueEngine{}, opt)
			b.ReportAllocs()
			start := enginetest.CPUTime()
			for b.Loop() {
				if _, _, err := spread(context.Background(), g, r, jobs, vopt); err != nil {
					b.Fatal(err)
				}
			}
			enginetest.ReportCPU(b, start)
		})
	}
}

// BenchmarkRouteSpreadAll: sar-nue:spread=all against plain Nue at 8 VLs
// on BenchmarkSpreadAll's fabrics, tables verified as the engine path
// does; CPU per routing in cpu-ms/op.
func BenchmarkRouteSpreadAll(b *testing.B) {
	for i, f := range spreadFabrics {
		g := spreadGraph(b, i)
		for _, e := range []routing.Engine{nue.Engine{}, NueEngine{SpreadAll: true}} {
			name := e.Name()
			if _, ok := e.(NueEngine); ok {
				name += ":spread=all"
			}
			b.Run(f.name+"/"+name, func(b *testing.B) {
				start := enginetest.CPUTime()
				for b.Loop() {
					if _, err := routing.RouteChain(context.Background(), g, []routing.Engine{e}, routing.Options{MaxVLs: 8}); err != nil {
						b.Fatal(err)
					}
				}
				enginetest.ReportCPU(b, start)
			})
		}
	}
}
