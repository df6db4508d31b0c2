package flitsim

import (
	"context"
	"testing"
)

// singlePacket sends one message of one class-0 packet from src to dst
// through an otherwise empty network and returns the delivery.
func singlePacket(t *testing.T, n *Network, src, dst int32) Delivery {
	t.Helper()
	tr := Traffic{Pattern: Uniform, Load: 0.5, Messages: 1}.withDefaults()
	if err := tr.validate(n); err != nil {
		t.Fatal(err)
	}
	w, err := compile(n, tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []Delivery
	s := newSim(context.Background(), n, w, RunOptions{OnDeliver: func(d Delivery) { got = append(got, d) }}.withDefaults())
	s.heap = arrivals{} // no generated traffic: just this packet
	s.totalMsgs = 1
	s.newMessage(src, dst, 0, 0)
	if err := s.run(); err != nil {
		t.Fatal(err)
	}
	if s.deadlock != nil {
		t.Fatal(s.deadlock)
	}
	if len(got) != 1 {
		t.Fatalf("%d deliveries, want 1", len(got))
	}
	return got[0]
}

// TestZeroLoadLatency checks the latency of a lone packet against the
// model's formula: a path through h switches crosses h+1 links, each
// taking LinkLatency cycles, and h switch pipelines; the tail follows the
// head by the serialisation time, (PacketFlits-1)/LinkBandwidth cycles,
// as long as the buffers cover the credit round trip:
//
//	latency = (h+1)·LinkLatency + h·PipelineDelay + (PacketFlits-1)/LinkBandwidth
func TestZeroLoadLatency(t *testing.T) {
	cfgs := []Config{
		{LinkLatency: 1, PipelineDelay: 0, PacketFlits: 8},
		{LinkLatency: 3, PipelineDelay: 2, PacketFlits: 4},
		{LinkLatency: 2, PipelineDelay: 1, PacketFlits: 5, LinkBandwidth: 0.5},
		// Wormhole with buffers just covering the credit round trip
		// (flit LinkLatency+PipelineDelay, credit LinkLatency).
		{LinkLatency: 1, PipelineDelay: 4, PacketFlits: 16, BufferFlits: 6, Switching: Wormhole},
		{LinkLatency: 5, PipelineDelay: 1, PacketFlits: 2, Queueing: FIFO, Allocator: ISLIP},
	}
	fixtures := []*fixture{torus(t, 4, "dor"), fatTree(t, "ftree")}
	for _, f := range fixtures {
		for _, cfg := range cfgs {
			n := network(t, f, cfg)
			c := n.Config()
			N := int32(n.NumNodes())
			pairs := [][2]int32{{0, 1}, {0, N - 1}, {N - 1, 0}, {3, N / 2}, {N / 2, 5}}
			for _, p := range pairs {
				d := singlePacket(t, n, p[0], p[1])
				h := int64(len(n.Path(p[0], p[1])) - 1) // switches = links - 1
				want := (h+1)*int64(c.LinkLatency) + h*int64(c.PipelineDelay) + int64(float64(c.PacketFlits-1)/c.LinkBandwidth)
				if got := d.Delivered - d.Created; got != want {
					t.Errorf("%s %+v: %d -> %d over %d switches: latency %d, want %d", f.r.Engine, cfg, p[0], p[1], h, got, want)
				}
				if d.Injected != d.Created {
					t.Errorf("%s: injected at %d, created at %d: the source was idle", f.r.Engine, d.Injected, d.Created)
				}
			}
		}
	}
}

// TestWholePackets: two packets leave one source at once on different VLs
// (classes with VL offsets 0 and 1) to the same destination. Under virtual
// cut-through links send whole packets, as InfiniBand links do: the first
// arrives at the zero-load latency, the second one packet time later.
// Wormhole interleaves the two VLs flit by flit, so both tails arrive
// late and one cycle apart.
func TestWholePackets(t *testing.T) {
	f := fatTree(t, "ftree")
	for _, sw := range []Switching{VirtualCutThrough, Wormhole} {
		n := network(t, f, Config{Switching: sw, VLs: 2, PacketFlits: 8})
		tr := Traffic{Pattern: HotSpot, Load: 0.5, Messages: 1, Classes: []Class{{}, {VLOffset: 1}}}.withDefaults()
		if err := tr.validate(n); err != nil {
			t.Fatal(err)
		}
		w, err := compile(n, tr, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		s := newSim(context.Background(), n, w, RunOptions{OnDeliver: func(d Delivery) { got = append(got, d.Delivered-d.Created) }}.withDefaults())
		s.heap = arrivals{}
		s.totalMsgs = 2
		src, dst := int32(0), int32(15)
		s.newMessage(src, dst, 0, 0)
		s.newMessage(src, dst, 1, 0)
		if err := s.run(); err != nil || s.deadlock != nil || len(got) != 2 {
			t.Fatalf("%s: %v %v, %d deliveries", sw, err, s.deadlock, len(got))
		}
		h := int64(len(n.Path(src, dst)) - 1)
		zero := h + 1 + 7 // link latency 1, no pipeline, 8 flits
		switch sw {
		case VirtualCutThrough:
			if got[0] != zero || got[1] != zero+8 {
				t.Errorf("vct: latencies %v, want [%d %d]", got, zero, zero+8)
			}
		case Wormhole:
			if got[0] <= zero || got[1] != got[0]+1 {
				t.Errorf("wormhole: latencies %v, want interleaved tails after %d", got, zero)
			}
		}
	}
}
