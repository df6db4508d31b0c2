package routing

import (
	"context"
	"sync"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// Benchmark fixtures, built once: the 3-level fat tree k=12 (432 switches,
// 1,728 hosts) and the 3-level Clos of radix 36 (1,620 switches, 11,664
// hosts).
var blBench struct {
	once         sync.Once
	fat12, clos3 *fabric.Graph
	err          error
}

func blBenchGraphs(b *testing.B) {
	b.Helper()
	blBench.once.Do(func() {
		compile := func(tp *topo.Topology, err error) *fabric.Graph {
			if err != nil {
				blBench.err = err
				return nil
			}
			g, err := fabric.Compile(tp.Fabric)
			if err != nil {
				blBench.err = err
			}
			return g
		}
		blBench.fat12 = compile(topo.FatTree(12, 3, 0))
		blBench.clos3 = compile(topo.Clos3(36))
	})
	if blBench.err != nil {
		b.Fatal(blBench.err)
	}
}

func blBenchRoute(b *testing.B, e Engine, g func() *fabric.Graph) {
	blBenchGraphs(b)
	gr := g()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := e.Route(context.Background(), gr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func blFat12() *fabric.Graph { return blBench.fat12 }
func blClos3() *fabric.Graph { return blBench.clos3 }

func BenchmarkMinHop_FatTree3_k12(b *testing.B) { blBenchRoute(b, MinHop{}, blFat12) }
func BenchmarkMinHop_Clos3_r36(b *testing.B)    { blBenchRoute(b, MinHop{}, blClos3) }
func BenchmarkUpDn_FatTree3_k12(b *testing.B)   { blBenchRoute(b, UpDn{}, blFat12) }
func BenchmarkUpDn_Clos3_r36(b *testing.B)      { blBenchRoute(b, UpDn{}, blClos3) }
func BenchmarkFtree_FatTree3_k12(b *testing.B)  { blBenchRoute(b, Ftree{}, blFat12) }
func BenchmarkFtree_Clos3_r36(b *testing.B)     { blBenchRoute(b, Ftree{}, blClos3) }
