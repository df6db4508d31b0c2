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
