package flitsim

import (
	"context"
	"math"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// TestThroughputBelowBound: on fabrics where a switch-to-switch channel,
// not the node links, limits uniform traffic (two nodes per switch), the
// simulation never beats the analytic bound and gets close to it. Below
// the bound accepted follows offered; offered beyond every node's link,
// the least served source stays under the bound on these fabrics (the
// mean may not: nodes whose paths avoid the busiest channel keep sending;
// and where a node's source queues per VL let traffic to unblocked
// destinations pass, not even the least served node need). Offered exactly the
// bound, accepted throughput reaches most of it (beyond it, unfairness
// between sources lowers the mean again).
func TestThroughputBelowBound(t *testing.T) {
	cases := []struct {
		f    *fixture
		near float64 // accepted / bound when offered the bound
	}{
		{routed(t, "ring6h2", func() (*topo.Topology, error) { return topo.Ring(6, 2, nil) }, "nue", 2), 0.8},
		{routed(t, "ring6h2", func() (*topo.Topology, error) { return topo.Ring(6, 2, nil) }, "dfsssp", 2), 0.7},
		{routed(t, "ring4h4", func() (*topo.Topology, error) { return topo.Ring(4, 4, nil) }, "updn", 1), 0.85},
		// Measured with this seed: nue 0.86, dfsssp 0.74, updn 0.90,
		// dor 0.65 of the bound (DOR's dateline VLs split the busiest
		// channel; the parking-lot unfairness of a ring costs the rest).
		{routed(t, "torus4x4h4", func() (*topo.Topology, error) { return topo.Torus([]int{4, 4}, 4, false) }, "dor", 2), 0.6},
	}
	for _, c := range cases {
		n := network(t, c.f, Config{BufferFlits: 32})
		b, err := n.Bound(Traffic{Pattern: Uniform}, 1)
		if err != nil {
			t.Fatal(err)
		}
		name := c.f.topo.Kind + "/" + c.f.r.Engine
		opt := RunOptions{Seed: 2, Warmup: 2000, Measure: 15000}
		below, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: 0.5 * b.Saturation}, opt)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(below.AcceptedFraction-below.OfferedFraction) > 0.03*below.OfferedFraction {
			t.Errorf("%s at %.3f (half the bound): accepted %.4f", name, below.OfferedFraction, below.AcceptedFraction)
		}
		at, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: b.Saturation}, opt)
		if err != nil {
			t.Fatal(err)
		}
		over, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: 1}, opt)
		if err != nil {
			t.Fatal(err)
		}
		minFrac := over.AcceptedMin / n.Config().LinkBandwidth
		t.Logf("%s: bound %.4f (%s); offered the bound, accepted %.4f; offered 1, accepted mean %.4f, least served %.4f",
			name, b.Saturation, b.LinkName, at.AcceptedFraction, over.AcceptedFraction, minFrac)
		if b.Saturation >= 0.95 {
			t.Errorf("%s: bound %.3f: the case does not exercise a channel bottleneck", name, b.Saturation)
		}
		if minFrac > b.Saturation*1.03 {
			t.Errorf("%s: least served source %.4f above the bound %.4f", name, minFrac, b.Saturation)
		}
		if at.AcceptedFraction > b.Saturation*1.02 || at.AcceptedFraction < c.near*b.Saturation {
			t.Errorf("%s: offered the bound %.4f, accepted %.4f: want within [%.0f %%, 102 %%] of it", name, b.Saturation, at.AcceptedFraction, 100*c.near)
		}
	}
}
