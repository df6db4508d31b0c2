package flitsim

import (
	"context"
	"errors"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// TestRouteStall: with a route stall of R cycles a FIFO input VC starts a
// packet of P flits at most every P+R cycles, so a node whose injection
// input has one VL accepts at most P/(P+R) flits per cycle (on a ring
// with nearest-neighbour traffic, where no channel is the bottleneck);
// without the stall the node reaches its full link. The stall adds R
// cycles per switch to the zero-load latency.
func TestRouteStall(t *testing.T) {
	f := routed(t, "switch8", func() (*topo.Topology, error) { return topo.FatTree(8, 1, 0) }, "minhop", 1)
	const P, R = 4, 2
	tr := Traffic{Pattern: Permutation, Load: 1}
	opt := RunOptions{Seed: 1, Warmup: 1000, Measure: 5000}
	acc := map[int]float64{}
	for _, stall := range []int{0, R} {
		n := network(t, f, Config{PacketFlits: P, RouteStall: stall, Queueing: FIFO})
		r, err := n.Run(context.Background(), tr, opt)
		if err != nil {
			t.Fatal(err)
		}
		acc[stall] = r.AcceptedFraction
		checkStats(t, "stall", r, Config{PacketFlits: P})
	}
	want := float64(P) / float64(P+R)
	t.Logf("accepted: %.4f without stall, %.4f with %d cycles (P/(P+R) = %.4f)", acc[0], acc[R], R, want)
	if d := acc[R] - want; d > 0.01 || d < -0.03 || acc[0] < 0.97 {
		t.Errorf("accepted %.4f with the stall (want %.4f), %.4f without", acc[R], want, acc[0])
	}
	lat := map[int]float64{}
	for _, stall := range []int{0, R} {
		n := network(t, f, Config{PacketFlits: P, RouteStall: stall, Queueing: FIFO})
		r, err := n.Run(context.Background(), Traffic{Pattern: Permutation, Load: 0.01}, opt)
		if err != nil {
			t.Fatal(err)
		}
		lat[stall] = r.NetworkLatency.Mean
	}
	if d := lat[R] - lat[0]; d < R-0.1 || d > R+0.3 {
		t.Errorf("zero-load network latency %.2f with the stall, %.2f without: want +%d", lat[R], lat[0], R)
	}
}

// TestLatencyClasses: channel latencies equal to LinkLatency change
// nothing; on a Dragonfly, global cables of G cycles instead of 1 add
// G−1 per global hop to the zero-load latency; ns convert at the link
// rate (seed 002 Table III: 40 ns local, 400 ns global).
func TestLatencyClasses(t *testing.T) {
	f := routed(t, "df-p2a4h2", func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 9) }, "minhop", 1)
	tr := Traffic{Pattern: Uniform, Load: 0.02}
	opt := RunOptions{Seed: 1, Warmup: 500, Measure: 20000}
	run := func(cfg Config) *Result {
		r, err := network(t, f, cfg).Run(context.Background(), tr, opt)
		if err != nil {
			t.Fatal(err)
		}
		checkStats(t, "latency", r, cfg)
		return r
	}
	same, err := GroupLatencies(f.g, f.topo.Group, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	a, b := run(Config{LinkLatency: 3}), run(Config{LinkLatency: 3, ChannelLatency: same})
	if a.Latency != b.Latency || a.AcceptedFlits != b.AcceptedFlits {
		t.Errorf("uniform channel latencies differ from LinkLatency: %+v vs %+v", a.Latency, b.Latency)
	}
	const G = 20
	long, err := GroupLatencies(f.g, f.topo.Group, 1, G)
	if err != nil {
		t.Fatal(err)
	}
	n := network(t, f, Config{})
	globalHops := 0.0 // mean over ordered node pairs of LFT global hops
	N := int32(n.NumNodes())
	for s := int32(0); s < N; s++ {
		for d := int32(0); d < N; d++ {
			for _, l := range n.Path(s, d) {
				if l < int32(f.g.NumChannels()) && f.topo.Group[f.g.Tail[l]] != f.topo.Group[f.g.Head[l]] {
					globalHops++
				}
			}
		}
	}
	globalHops /= float64(N * (N - 1))
	base, slow := run(Config{}), run(Config{ChannelLatency: long})
	want := (G - 1) * globalHops
	if d := slow.NetworkLatency.Mean - base.NetworkLatency.Mean; d < 0.95*want || d > 1.05*want+0.5 {
		t.Errorf("global latency %d: network latency %.2f -> %.2f, want +%.2f", G, base.NetworkLatency.Mean, slow.NetworkLatency.Mean, want)
	}
	ns := NsPerCycle(256, 100) // 20.48 ns per cycle
	if c, err := ParseCycles("400ns", ns); err != nil || c != 20 {
		t.Errorf("400ns at 100 Gb/s = %d cycles, %v", c, err)
	}
	if c, err := ParseCycles("40ns", ns); err != nil || c != 2 {
		t.Errorf("40ns = %d cycles, %v", c, err)
	}
	for _, bad := range []string{"x", "-3", "5ms"} {
		if _, err := ParseCycles(bad, ns); err == nil {
			t.Errorf("ParseCycles(%q) accepted", bad)
		}
	}
	if _, err := ParseCycles("40ns", 0); err == nil {
		t.Error("ns without a link rate accepted")
	}
}

// TestVCPools: with two interchangeable VCs per VL a FIFO input hides the
// route stall (a packet routes on one VC while the other sends), so the
// single switch of TestRouteStall accepts nearly its full link again;
// finite runs with pools deliver every packet once under both switching
// modes; a cyclic routing still deadlocks, and the cycle is reported.
func TestVCPools(t *testing.T) {
	f := routed(t, "switch8", func() (*topo.Topology, error) { return topo.FatTree(8, 1, 0) }, "minhop", 1)
	tr := Traffic{Pattern: Permutation, Load: 1}
	opt := RunOptions{Seed: 1, Warmup: 1000, Measure: 5000}
	cfg := Config{PacketFlits: 4, RouteStall: 2, Queueing: FIFO, VCsPerVL: 2}
	r, err := network(t, f, cfg).Run(context.Background(), tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	checkStats(t, "pool", r, cfg)
	if r.AcceptedFraction < 0.95 || r.VLs != 2 {
		t.Errorf("2 VCs per VL: accepted %.4f on %d VCs, want >= 0.95 on 2", r.AcceptedFraction, r.VLs)
	}
	for _, c := range []Config{{VCsPerVL: 3}, {VCsPerVL: 2, Switching: Wormhole, BufferFlits: 4, Queueing: FIFO}} {
		n := network(t, torus(t, 4, "dor"), c)
		seen := map[[2]int64]bool{}
		res, err := n.Run(context.Background(), Traffic{Pattern: Uniform, Load: 0.9, Messages: 40, MessagePackets: 2},
			RunOptions{Seed: 5, OnDeliver: func(d Delivery) {
				id := [2]int64{int64(d.Src), d.Seq}
				if seen[id] {
					t.Errorf("packet %d of node %d delivered twice", d.Seq, d.Src)
				}
				seen[id] = true
			}})
		if err != nil || res.Verdict != VerdictComplete || len(seen) != 16*40*2 {
			t.Errorf("%+v: %v, verdict %s, %d packets", c, err, res.Verdict, len(seen))
		}
	}
	n := network(t, torus(t, 4, "minhop"), Config{Queueing: FIFO, PacketFlits: 4, BufferFlits: 4, VCsPerVL: 2})
	_, err = n.Run(context.Background(), Traffic{Pattern: Uniform, Load: 1}, RunOptions{Seed: 1, Warmup: 100, Measure: 100000, DeadlockWindow: 500})
	var dl *DeadlockError
	if !errors.As(err, &dl) || len(dl.Resources) < 2 {
		t.Fatalf("cyclic routing with pools: %v", err)
	}
}
