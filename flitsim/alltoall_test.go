package flitsim

import (
	"context"
	"fmt"
	"testing"
)

// TestAllToAllShift runs the finite shift exchange to completion: every
// one of the N(N-1) messages arrives, the completion time is at least the
// analytic bound and within a sane factor of it.
func TestAllToAllShift(t *testing.T) {
	cases := []struct {
		f     *fixture
		cfg   Config
		sync  bool
		slack float64 // completion / bound must stay below this
	}{
		// Fat-tree routing makes every shift phase contention-free.
		{fatTree(t, "ftree"), Config{}, true, 1.3},
		{fatTree(t, "ftree"), Config{}, false, 1.3},
		{fatTree(t, "nue"), Config{Allocator: ISLIP}, false, 2.5},
		{torus(t, 4, "dor"), Config{}, true, 3},
		{torus(t, 4, "nue"), Config{Switching: Wormhole, BufferFlits: 8}, false, 3},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s-%s-sync=%v", c.f.topo.Kind, c.f.r.Engine, c.sync)
		t.Run(name, func(t *testing.T) {
			n := network(t, c.f, c.cfg)
			tr := Traffic{Pattern: Shift, MessagePackets: 4, ShiftSync: c.sync}
			b, err := n.Bound(tr, 1)
			if err != nil {
				t.Fatal(err)
			}
			res, err := n.Run(context.Background(), tr, RunOptions{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			N := int64(n.NumNodes())
			if res.Messages != N*(N-1) || res.MessagesDone != res.Messages {
				t.Fatalf("%d of %d messages delivered, want %d", res.MessagesDone, res.Messages, N*(N-1))
			}
			if res.Completion == 0 || float64(res.Completion) < b.CompletionCycles {
				t.Fatalf("completion %d cycles, below the bound %.0f", res.Completion, b.CompletionCycles)
			}
			ratio := float64(res.Completion) / b.CompletionCycles
			if ratio > c.slack {
				t.Errorf("completion %d cycles = %.2f × the bound %.0f, want below %.1f", res.Completion, ratio, b.CompletionCycles, c.slack)
			}
			if got, want := res.AcceptedFlits, N*(N-1)*4*int64(n.Config().PacketFlits); got != want {
				t.Errorf("accepted %d flits, want %d", got, want)
			}
			t.Logf("completion %d cycles (bound %.0f, %.2f×), throughput %.3f flits/cycle/node", res.Completion, b.CompletionCycles, ratio, res.Accepted)
		})
	}
}
