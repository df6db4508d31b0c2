package flitsim

import (
	"context"
	"fmt"
	"testing"
)

// TestConservation runs finite workloads to the end and checks that every
// packet created is delivered exactly once, to its destination, and that
// packets of one (source, destination, class) arrive in the order they
// were created: the routings are deterministic, so they share one path.
func TestConservation(t *testing.T) {
	arb := &VLArbitration{High: []VLWeight{{VL: 1, Weight: 4}}, Low: []VLWeight{{VL: 0, Weight: 8}, {VL: 1, Weight: 1}}, HighLimit: 1}
	cases := []struct {
		f   *fixture
		cfg Config
		tr  Traffic
	}{
		{torus(t, 4, "dor"), Config{}, Traffic{Pattern: Uniform, Load: 0.9, Messages: 60}},
		{torus(t, 4, "dor"), Config{Switching: Wormhole, BufferFlits: 4, Allocator: ISLIP}, Traffic{Pattern: Uniform, Load: 0.7, Messages: 60, MessagePackets: 3}},
		{torus(t, 4, "dor"), Config{Queueing: FIFO, VLArb: arb, LinkLatency: 3, PipelineDelay: 2}, Traffic{Pattern: HotSpot, HotNode: 5, HotFraction: 0.3, Load: 1, Messages: 40}},
		{fatTree(t, "ftree"), Config{Allocator: ISLIP, Iterations: 3}, Traffic{Pattern: Permutation, Load: 1, Messages: 80, Arrival: Exponential}},
		{fatTree(t, "ftree"), Config{LinkBandwidth: 0.5, PacketFlits: 3}, Traffic{Pattern: Uniform, Load: 1, Messages: 50, Arrival: Weibull, WeibullShape: 0.5}},
		{ring5(t, "nue"), Config{Switching: Wormhole, BufferFlits: 3, PacketFlits: 7}, Traffic{Pattern: Uniform, Load: 1, Messages: 100}},
		{torus(t, 4, "dor"), Config{VLs: 4}, Traffic{Pattern: IO, IONode: ioNodes(16, 4), IORatio: 0.3, Load: 0.8, Messages: 50,
			Classes: []Class{{MessagePackets: 1}, {MessagePackets: 4, VLOffset: 2}}}},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%s-%s", i, c.f.r.Engine, c.tr.Pattern), func(t *testing.T) {
			n := network(t, c.f, c.cfg)
			type key struct {
				src, dst int32
				class    uint8
			}
			seen := map[[2]int64]bool{}
			last := map[key]int64{}
			created := map[int32]int64{}
			count := 0
			opt := RunOptions{Seed: uint64(i) + 7, OnDeliver: func(d Delivery) {
				count++
				id := [2]int64{int64(d.Src), d.Seq}
				if seen[id] {
					t.Errorf("packet %d of node %d delivered twice", d.Seq, d.Src)
				}
				seen[id] = true
				k := key{d.Src, d.Dst, d.Class}
				if prev, ok := last[k]; ok && prev > d.Seq {
					t.Errorf("%d -> %d: packet %d after packet %d", d.Src, d.Dst, d.Seq, prev)
				}
				last[k] = d.Seq
				created[d.Src] = max(created[d.Src], d.Seq+1)
				if d.Delivered <= d.Injected || d.Injected < d.Created {
					t.Errorf("packet %d of %d: created %d, injected %d, delivered %d", d.Seq, d.Src, d.Created, d.Injected, d.Delivered)
				}
			}}
			res, err := n.Run(context.Background(), c.tr, opt)
			if err != nil {
				t.Fatal(err)
			}
			if res.MessagesDone != res.Messages || res.Completion == 0 || res.Unfinished != 0 {
				t.Fatalf("%d of %d messages done, completion %d, %d unfinished", res.MessagesDone, res.Messages, res.Completion, res.Unfinished)
			}
			// Every source numbers its packets 0, 1, …: all of them arrived.
			total := int64(0)
			for _, n := range created {
				total += n
			}
			if total != int64(count) || int64(count) != res.Latency.Count {
				t.Fatalf("%d deliveries, %d packets numbered, %d measured", count, total, res.Latency.Count)
			}
			if got, want := res.AcceptedFlits, res.OfferedFlits; got != want {
				t.Fatalf("accepted %d flits, offered %d", got, want)
			}
		})
	}
}

// ioNodes makes every k-th node an I/O node serving the k-1 nodes after it.
func ioNodes(n, k int) []int32 {
	io := make([]int32, n)
	for i := range io {
		io[i] = int32(i - i%k)
		if i%k == 0 {
			io[i] = -1
		}
	}
	return io
}
