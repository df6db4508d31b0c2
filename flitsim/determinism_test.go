package flitsim

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
)

// TestDeterminism: equal seeds give identical results, field by field and
// byte for byte as JSON, also when runs share a Network concurrently; different seeds give different ones.
func TestDeterminism(t *testing.T) {
	cases := []struct {
		f   *fixture
		cfg Config
		tr  Traffic
	}{
		{torus(t, 4, "dor"), Config{Allocator: ISLIP}, Traffic{Pattern: Uniform, Load: 0.8, Arrival: Exponential}},
		{fatTree(t, "ftree"), Config{Switching: Wormhole, BufferFlits: 8}, Traffic{Pattern: HotSpot, HotNode: 2, HotFraction: 0.1, Load: 0.6, MessagePackets: 3}},
		{torus(t, 4, "dor-nodateline"), deadlockConfigs[0], Traffic{Pattern: Uniform, Load: 1}},
	}
	opt := RunOptions{Warmup: 300, Measure: 4000}
	for _, c := range cases {
		n := network(t, c.f, c.cfg)
		run := func(seed uint64) *Result {
			o := opt
			o.Seed = seed
			res, err := n.Run(context.Background(), c.tr, o)
			if err != nil && res == nil {
				t.Fatal(err)
			}
			return res
		}
		a := run(1)
		var wg sync.WaitGroup
		par := make([]*Result, 4)
		for i := range par {
			wg.Add(1)
			go func() {
				defer wg.Done()
				par[i] = run(1)
			}()
		}
		wg.Wait()
		aj, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range par {
			bj, _ := json.Marshal(b)
			if !reflect.DeepEqual(a, b) || !bytes.Equal(aj, bj) {
				t.Errorf("%s %s: run %d with the same seed differs: accepted %.5f vs %.5f, latency %.3f vs %.3f",
					c.f.r.Engine, c.tr.Pattern, i, a.Accepted, b.Accepted, a.Latency.Mean, b.Latency.Mean)
			}
		}
		if d := run(2); reflect.DeepEqual(a, d) {
			t.Errorf("%s %s: seeds 1 and 2 give identical results", c.f.r.Engine, c.tr.Pattern)
		}
	}
}
