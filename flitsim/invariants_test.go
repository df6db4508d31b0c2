package flitsim

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// checkStats asserts what every Result must satisfy: per VL, mean ≤ max ≤
// the buffer depth; every link's utilisation ≤ its capacity; accepted =
// offered − refused + backlog at the window's start − backlog at its end
// (so accepted ≤ offered + the backlog drained); the classes sum to the
// totals; the least served source is no better than the mean.
func checkStats(t *testing.T, name string, r *Result, cfg Config) {
	t.Helper()
	cfg = cfg.WithDefaults()
	for _, v := range r.VLStats {
		if v.MeanFlits > float64(v.MaxFlits)+1e-9 || v.MaxFlits > int32(cfg.BufferFlits) || v.MeanFraction > 1+1e-9 || v.MeanFlits < 0 {
			t.Errorf("%s: VL%d occupancy mean %.3f (%.3f of the buffer), max %d of %d", name, v.VL, v.MeanFlits, v.MeanFraction, v.MaxFlits, cfg.BufferFlits)
		}
	}
	for _, l := range r.Links {
		if l.Utilisation > 1+1e-9 {
			t.Errorf("%s: link %s at %.4f of its bandwidth", name, l.Name, l.Utilisation)
		}
	}
	if r.AcceptedFlits != r.OfferedFlits-r.RefusedFlits+r.BacklogStart-r.BacklogEnd || r.BacklogStart < 0 || r.BacklogEnd < 0 || r.RefusedFlits > r.OfferedFlits {
		t.Errorf("%s: accepted %d flits, offered %d (%d refused), backlog %d -> %d", name, r.AcceptedFlits, r.OfferedFlits, r.RefusedFlits, r.BacklogStart, r.BacklogEnd)
	}
	var off, acc, lat int64
	for _, c := range r.Classes {
		off, acc, lat = off+c.OfferedFlits, acc+c.AcceptedFlits, lat+c.Latency.Count
	}
	if off != r.OfferedFlits || acc != r.AcceptedFlits || lat != r.Latency.Count {
		t.Errorf("%s: classes sum to offered %d, accepted %d, %d latencies; totals %d, %d, %d", name, off, acc, lat, r.OfferedFlits, r.AcceptedFlits, r.Latency.Count)
	}
	if r.AcceptedMin > r.Accepted+1e-9 || r.Latency.Mean > float64(r.Latency.Max)+1e-9 {
		t.Errorf("%s: least served source %.4f above the mean %.4f, or latency mean %.1f above max %d", name, r.AcceptedMin, r.Accepted, r.Latency.Mean, r.Latency.Max)
	}
	if r.WindowCycles == 0 && (r.OfferedFlits != 0 || r.AcceptedFlits != 0 || r.Latency.Count != 0) {
		t.Errorf("%s: no window but figures %+v", name, r)
	}
}

// TestStatisticsInvariants: the invariants hold below, at and past
// saturation (where the source queues fill and refuse messages), for
// finite runs, under wormhole, narrow links and traffic classes; past
// the bound the verdict is unstable, and the accepted throughput exceeds
// the bound only when the offered load does.
func TestStatisticsInvariants(t *testing.T) {
	cases := []struct {
		f   *fixture
		cfg Config
		tr  Traffic
	}{
		{torus(t, 4, "dor"), Config{}, Traffic{Pattern: Uniform, Load: 0.3}},
		{torus(t, 4, "dor"), Config{}, Traffic{Pattern: Transpose, Load: 1}},
		{torus(t, 4, "dor"), Config{Switching: Wormhole, BufferFlits: 4, Queueing: FIFO}, Traffic{Pattern: HotSpot, HotNode: 3, HotFraction: 0.5, Load: 0.9}},
		{fatTree(t, "ftree"), Config{LinkBandwidth: 0.5, PacketFlits: 3}, Traffic{Pattern: Uniform, Load: 1, Arrival: Exponential}},
		{fatTree(t, "ftree"), Config{}, Traffic{Pattern: Shift}},
		{torus(t, 4, "dor"), Config{VLs: 4}, Traffic{Pattern: IO, IONode: ioNodes(16, 4), IORatio: 0.3, Load: 1,
			Classes: []Class{{MessagePackets: 1}, {MessagePackets: 4, VLOffset: 2}}}},
	}
	for i, c := range cases {
		name := fmt.Sprintf("%d-%s-%s-%g", i, c.f.r.Engine, c.tr.Pattern, c.tr.Load)
		n := network(t, c.f, c.cfg)
		r, err := n.Run(context.Background(), c.tr, RunOptions{Seed: 3, Warmup: 1000, Measure: 4000, SourceQueue: 32})
		if err != nil {
			t.Fatal(err)
		}
		checkStats(t, name, r, c.cfg)
		b, err := n.Bound(c.tr, 3)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: offered %.3f accepted %.3f bound %.3f verdict %s refused %d", name, r.OfferedFraction, r.AcceptedFraction, b.Saturation, r.Verdict, r.Refused)
		if c.tr.Pattern == Shift {
			if r.Verdict != VerdictComplete {
				t.Errorf("%s: verdict %s", name, r.Verdict)
			}
			continue
		}
		if c.tr.Load > 1.1*b.Saturation && (r.Verdict != VerdictUnstable || r.Refused == 0) {
			t.Errorf("%s: offered %.3f past the bound %.3f, verdict %s, %d refused", name, c.tr.Load, b.Saturation, r.Verdict, r.Refused)
		}
		if c.tr.Load < 0.5*b.Saturation && r.Verdict != VerdictStable {
			t.Errorf("%s: offered %.3f well below the bound %.3f, verdict %s", name, c.tr.Load, b.Saturation, r.Verdict)
		}
		if r.AcceptedFraction > 1.02*b.Saturation && c.tr.Load <= b.Saturation {
			t.Errorf("%s: accepted %.4f above the bound %.4f at offered %.3f", name, r.AcceptedFraction, b.Saturation, c.tr.Load)
		}
	}
}

// TestSourceQueueBoundsMemory: past saturation the packets a run keeps
// do not grow with its length (the source queues stop at their bound),
// and StopUnstable ends the run at the first refusal after the warm-up.
func TestSourceQueueBoundsMemory(t *testing.T) {
	n := network(t, torus(t, 4, "dor"), Config{})
	tr := Traffic{Pattern: Transpose, Load: 1}
	kept := func(measure int64) int {
		var s *sim
		opt := RunOptions{Seed: 1, Warmup: 500, Measure: measure, Drain: 1, SourceQueue: 16}.withDefaults()
		w, err := compile(n, tr.withDefaults(), 1)
		if err != nil {
			t.Fatal(err)
		}
		s = newSim(context.Background(), n, w, opt)
		if err := s.run(); err != nil {
			t.Fatal(err)
		}
		return len(s.pk)
	}
	short, long := kept(2000), kept(20000)
	t.Logf("packet slots: %d after 2,500 cycles, %d after 20,500", short, long)
	if long > short+short/4 {
		t.Errorf("packet slots grow with the run past saturation: %d -> %d", short, long)
	}
	r, err := n.Run(context.Background(), tr, RunOptions{Seed: 1, Warmup: 500, Measure: 20000, SourceQueue: 16, StopUnstable: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != VerdictUnstable || r.Cycles >= 20000 || r.WindowCycles >= 20000 {
		t.Errorf("StopUnstable: verdict %s after %d cycles (window %d)", r.Verdict, r.Cycles, r.WindowCycles)
	}
	checkStats(t, "stop-unstable", r, Config{})
}

// TestDeadlockBeforeWarmup: a deadlock before the warm-up ends leaves no
// measurement window: every window figure is 0, not computed from cycle
// 0; a deadlock inside the window keeps the invariants.
func TestDeadlockBeforeWarmup(t *testing.T) {
	n := network(t, ring5(t, "minhop"), Config{Queueing: FIFO, PacketFlits: 4, BufferFlits: 4})
	tr := Traffic{Pattern: Uniform, Load: 1}
	r, err := n.Run(context.Background(), tr, RunOptions{Seed: 1, Warmup: 1_000_000, Measure: 1000, DeadlockWindow: 200})
	var dl *DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("expected a deadlock, got %v", err)
	}
	if r.WindowCycles != 0 || r.Verdict != VerdictDeadlock || dl.Cycle >= 1_000_000 {
		t.Errorf("deadlock at cycle %d: window %d cycles, verdict %s", dl.Cycle, r.WindowCycles, r.Verdict)
	}
	checkStats(t, "before-warmup", r, Config{PacketFlits: 4, BufferFlits: 4})
	r, err = n.Run(context.Background(), tr, RunOptions{Seed: 1, Warmup: 50, Measure: 100000, DeadlockWindow: 200})
	if !errors.As(err, &dl) || r.WindowCycles == 0 {
		t.Fatalf("deadlock inside the window: %v, window %d", err, r.WindowCycles)
	}
	checkStats(t, "in-window", r, Config{PacketFlits: 4, BufferFlits: 4})
	for _, v := range r.VLStats {
		if v.MeanFlits > 0 && v.MaxFlits == 0 {
			t.Errorf("VL%d: mean %.2f with max 0", v.VL, v.MeanFlits)
		}
	}
}
