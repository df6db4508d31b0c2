package flitsim

import (
	"context"
	"math"
	"testing"
)

// TestSaturationFatTree: on the 4-ary 2-tree (16 nodes) with fat-tree
// routing, the analytic uniform bound is 1 (the routing balances the up
// links perfectly; only the node links limit), and the simulated
// saturation throughput comes within 10 % of it with switch buffers of
// eight packets per VL. Below saturation, accepted follows offered.
func TestSaturationFatTree(t *testing.T) {
	f := fatTree(t, "ftree")
	n := network(t, f, Config{BufferFlits: 64})
	b, err := n.Bound(Traffic{Pattern: Uniform}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(b.Saturation-1) > 1e-9 {
		t.Fatalf("uniform bound %.4f on %s, want 1", b.Saturation, b.LinkName)
	}
	best := 0.0
	for _, load := range []float64{0.5, 0.9, 1.0} {
		res, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: load}, RunOptions{Seed: 3, Warmup: 2000, Measure: 20000})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("offered %.2f: accepted %.3f (bound %.3f), latency mean %.1f p99 %d", res.OfferedFraction, res.AcceptedFraction, b.Saturation, res.Latency.Mean, res.Latency.P99)
		if load == 0.5 && math.Abs(res.AcceptedFraction-res.OfferedFraction) > 0.02 {
			t.Errorf("below saturation: accepted %.3f, offered %.3f", res.AcceptedFraction, res.OfferedFraction)
		}
		best = max(best, res.AcceptedFraction)
	}
	if best < 0.9*b.Saturation || best > b.Saturation*1.01 {
		t.Errorf("saturation throughput %.3f, bound %.3f: not within 10 %%", best, b.Saturation)
	}
}
