package sar

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// BenchmarkMeasure_FatTree3_k12: SAR's metrics of MinHop's tables on the
// 3-level fat tree k=12 for six random jobs.
func BenchmarkMeasure_FatTree3_k12(b *testing.B) {
	tp, err := topo.FatTree(12, 3, 0)
	if err != nil {
		b.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		b.Fatal(err)
	}
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
