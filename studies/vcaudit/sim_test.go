package vcaudit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nuesm/nuesm/flitsim"
	"github.com/nuesm/nuesm/internal/simtest"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcaudit"
	"github.com/nuesm/nuesm/studies/vcpolicy"
)

// TestVCPolicyMatchesAudit: on BR with 3 super nodes, MIN-adaptive
// routing over the two-level tables (the audit's minimal relation) and
// LAR (the audit's lar-own and lar-toward), each VC policy deadlocks under
// full uniform or super-node-local load on deadlock-prone hardware exactly
// when the audit finds a cycle; acyclic ones run 4 × 20,000 cycles
// without.
func TestVCPolicyMatchesAudit(t *testing.T) {
	f := simtest.RSIBR(t, 3)
	tb, err := rsi.Build(f.G, f.Topo.Group)
	if err != nil {
		t.Fatal(err)
	}
	type tc struct {
		lar bool
		mis vcaudit.Misroute
		vc  string
	}
	var cases []tc
	for _, name := range []string{"one-vc", "rsi-paper", "phase", "global-hops", "df-2vc", "hops:2", "hops:3", "hops:6"} {
		cases = append(cases, tc{false, vcaudit.NoMisroute, name})
	}
	cases = append(cases, tc{true, vcaudit.LAROwn, "phase"}, tc{true, vcaudit.LAROwn, "hops:7"},
		tc{true, vcaudit.LARToward, "hops:3"}, tc{true, vcaudit.LARToward, "hops:7"})
	base, err := flitsim.NewNetwork(f.G, f.R, flitsim.Config{PacketFlits: 4, BufferFlits: 4, Queueing: flitsim.FIFO})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		vp, err := vcpolicy.Parse(c.vc)
		if err != nil {
			t.Fatal(err)
		}
		aud, err := vcaudit.Audit(vcaudit.Config{Graph: f.G, Tables: tb, Policy: vp, Misroute: c.mis})
		if err != nil {
			t.Fatal(err)
		}
		var p flitsim.Policy
		if c.lar {
			p, err = rsi.NewLAR(f.G, rsi.LAR{SwitchGroups: f.Topo.Group, Minimal: tb, Toward: c.mis == vcaudit.LARToward})
		} else {
			p, err = flitsim.NewAdaptive(f.G, flitsim.Adaptive{Kind: flitsim.MinAdaptive, SwitchGroups: f.Topo.Group, Minimal: tb})
		}
		if err != nil {
			t.Fatal(err)
		}
		vc, err := vcpolicy.ForSim(vp)
		if err != nil {
			t.Fatal(err)
		}
		n, err := base.WithRouting(p, vc)
		if err != nil {
			t.Fatal(err)
		}
		var dead error
		var res *flitsim.Result
		for _, pat := range []flitsim.Pattern{flitsim.Uniform, flitsim.GroupLocal} {
			for seed := uint64(1); seed <= 2 && dead == nil; seed++ {
				res, err = n.Run(context.Background(), flitsim.Traffic{Pattern: pat, Groups: f.Topo.Group, Load: 1},
					flitsim.RunOptions{Seed: seed, Warmup: 500, Measure: 20000, Drain: 1, DeadlockWindow: 1000})
				if err != nil && !errors.Is(err, flitsim.ErrDeadlock) {
					t.Fatal(err)
				}
				dead = err
			}
		}
		name := p.Name() + "/" + c.mis.String() + "/" + c.vc
		t.Logf("%s: audit deadlock-free=%v; simulation: %v", name, aud.DeadlockFree(), dead)
		if aud.DeadlockFree() != (dead == nil) {
			t.Errorf("%s: vcaudit deadlock-free = %v, simulation deadlock = %v", name, aud.DeadlockFree(), dead)
		}
		if c.lar && dead == nil && res.Misrouted == 0 {
			t.Errorf("%s: no packet misrouted", name)
		}
	}
}
