package flitsim

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// BenchmarkFlitHops_Torus8x8_DOR measures simulation speed in flit-hops
// (flits sent over a link) per second: 8×8 torus, one node per switch,
// DOR with datelines, uniform traffic at 0.3 load, 4 VLs simulated,
// 8-flit buffers, 4-flit packets.
func BenchmarkFlitHops_Torus8x8_DOR(b *testing.B) {
	f := torus(b, 8, "dor")
	n := network(b, f, Config{VLs: 4, BufferFlits: 8, PacketFlits: 4})
	tr := Traffic{Pattern: Uniform, Load: 0.3}
	opt := RunOptions{Seed: 1, Warmup: 1000, Measure: 20000, Drain: 1000}
	var hops int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := n.Run(context.Background(), tr, opt)
		if err != nil {
			b.Fatal(err)
		}
		hops += res.FlitHops
	}
	b.ReportMetric(float64(hops)/b.Elapsed().Seconds(), "flit-hops/s")
}

// BenchmarkFlitHops_FatTree4x3_Shift measures the speed on the bench's
// 3-level fat tree (64 nodes, 48 switches): the all-to-all shift exchange
// of 4-packet messages with Nue (k = 1), default hardware.
func BenchmarkFlitHops_FatTree4x3_Shift(b *testing.B) {
	f := routed(b, "fattree4-3", func() (*topo.Topology, error) { return topo.FatTree(4, 3, 0) }, "nue", 1)
	n := network(b, f, Config{})
	tr := Traffic{Pattern: Shift, MessagePackets: 4}
	var hops int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := n.Run(context.Background(), tr, RunOptions{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		hops += res.FlitHops
	}
	b.ReportMetric(float64(hops)/b.Elapsed().Seconds(), "flit-hops/s")
}

// BenchmarkCycles_Torus8x8_BookSimRouter measures simulated cycles per
// second in the configuration of the BookSim2 speed comparison
// (bench/flitsim/booksim/speed.go): 8×8 torus, DOR, uniform 0.25, the
// router of BookSim2's defaults (bookSimRouter).
func BenchmarkCycles_Torus8x8_BookSimRouter(b *testing.B) {
	n := network(b, torus(b, 8, "dor"), bookSimRouter)
	tr := Traffic{Pattern: Uniform, Load: 0.25}
	opt := RunOptions{Seed: 1, Warmup: 1000, Measure: 20000, Drain: 1000}
	var cycles int64
	b.ReportAllocs()
	for b.Loop() {
		res, err := n.Run(context.Background(), tr, opt)
		if err != nil {
			b.Fatal(err)
		}
		cycles += res.Cycles
	}
	b.ReportMetric(float64(cycles)/b.Elapsed().Seconds(), "cycles/s")
}
