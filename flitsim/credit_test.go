package flitsim

import (
	"context"
	"fmt"
	"testing"
)

// checkCredits verifies the flow-control invariants of every link and VL
// between two cycles: credits never go negative, no input buffer holds
// more than BufferFlits flits, its entries account for exactly its flits,
// and the credits upstream plus the flits buffered downstream plus the
// flits and credits in flight on the link always add up to BufferFlits
// (so no credit is ever created or lost, and no flit overflows a buffer).
func checkCredits(s *sim) error {
	n := s.n
	depth := int32(s.cfg.BufferFlits)
	NV := len(s.ov)
	flying, credits := make([]int32, NV), make([]int32, NV)
	for _, b := range s.wh.b {
		for _, ev := range b {
			k := ev.link<<s.vs | int32(ev.vl)
			if ev.kind&evCredit != 0 {
				credits[k]++
			} else {
				flying[k]++
			}
		}
	}
	for l := int32(0); l < n.nLinks; l++ {
		for vl := int32(0); vl < s.V; vl++ {
			k := l<<s.vs | vl
			cr := s.ov[k].credits
			if cr < 0 {
				return fmt.Errorf("link %s VL%d: %d credits", n.LinkName(l), vl, cr)
			}
			var held int32
			if n.lkDstSw[l] >= 0 {
				iv := &s.iv[k]
				held = iv.flits
				if held > depth {
					return fmt.Errorf("link %s VL%d: %d flits in a %d-flit buffer", n.LinkName(l), vl, held, depth)
				}
				var sum int32
				for e := iv.head; e >= 0; e = s.en[e].next {
					sum += s.en[e].arr - s.en[e].sent
				}
				if sum != held {
					return fmt.Errorf("link %s VL%d: entries hold %d flits, buffer counts %d", n.LinkName(l), vl, sum, held)
				}
			}
			if got := cr + held + flying[k] + credits[k]; got != depth {
				return fmt.Errorf("link %s VL%d: %d credits + %d buffered + %d flits and %d credits in flight = %d, want %d",
					n.LinkName(l), vl, cr, held, flying[k], credits[k], got, depth)
			}
		}
	}
	return nil
}

// TestCreditFlow runs saturated workloads cycle by cycle and checks the
// credit invariants after every cycle, for both switching disciplines,
// shallow and deep buffers, both allocators, both queueings, link
// bandwidth below one and multi-packet messages.
func TestCreditFlow(t *testing.T) {
	cases := []struct {
		f   *fixture
		cfg Config
		tr  Traffic
	}{
		{torus(t, 4, "dor"), Config{PacketFlits: 4, BufferFlits: 4}, Traffic{Pattern: Uniform, Load: 1}},
		{torus(t, 4, "dor"), Config{Switching: Wormhole, PacketFlits: 8, BufferFlits: 2, LinkLatency: 3}, Traffic{Pattern: Uniform, Load: 1}},
		{torus(t, 4, "dor"), Config{Switching: Wormhole, PacketFlits: 5, BufferFlits: 7, Allocator: ISLIP, Queueing: FIFO}, Traffic{Pattern: HotSpot, HotNode: 6, HotFraction: 0.5, Load: 1}},
		{fatTree(t, "ftree"), Config{PacketFlits: 3, BufferFlits: 10, LinkBandwidth: 0.6, PipelineDelay: 2}, Traffic{Pattern: HotSpot, HotNode: 3, HotFraction: 0.3, Load: 1, MessagePackets: 3}},
		{ring5(t, "nue"), Config{PacketFlits: 4, BufferFlits: 8, Allocator: ISLIP, Iterations: 3}, Traffic{Pattern: Shift, MessagePackets: 2}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s-%s", i, c.f.r.Engine, c.cfg.Switching), func(t *testing.T) {
			n := network(t, c.f, c.cfg)
			tr := c.tr.withDefaults()
			if err := tr.validate(n); err != nil {
				t.Fatal(err)
			}
			w, err := compile(n, tr, 1)
			if err != nil {
				t.Fatal(err)
			}
			s := newSim(context.Background(), n, w, RunOptions{Seed: 3, Warmup: 200, Measure: 1500, Drain: 1}.withDefaults())
			full := false
			for steps := 0; !s.done; steps++ {
				if err := s.step(); err != nil {
					t.Fatal(err)
				}
				if err := checkCredits(s); err != nil {
					t.Fatalf("cycle %d: %v", s.now, err)
				}
				for k := range s.iv {
					full = full || s.iv[k].flits > int32(n.cfg.BufferFlits-n.cfg.PacketFlits)
				}
			}
			if s.deadlock != nil {
				t.Fatal(s.deadlock)
			}
			t.Logf("%d cycles, %d flit-hops checked", s.now, s.flitHops)
			if !full {
				t.Error("no buffer ever lacked room for a packet: the load did not test flow control")
			}
		})
	}
}
