package vcaudit

import (
	"fmt"
	"testing"

	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/topo"
)

// rsiConfigs returns audit configs of an RSI network with both routings
// inside super nodes: [0] every minimal port, [1] dimension order.
func rsiConfigs(t *testing.T, layer1 string, superNodes int) [2]Config {
	t.Helper()
	tp, g := gen(t, "rsi", map[string]string{"layer1": layer1, "supernodes": fmt.Sprint(superNodes)})
	dims, err := topo.RSILayer1Dims(layer1)
	if err != nil {
		t.Fatal(err)
	}
	var out [2]Config
	for i, o := range []rsi.BuildOptions{{}, {Local: rsi.DimOrder, Dims: dims}} {
		tb, err := rsi.BuildWith(g, tp.Group, o)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = Config{Graph: g, Tables: tb, NoUTurn: true}
	}
	return out
}

// verdict condenses a result: "acyclic", "inside" (a cycle within one
// super node) or "through" (a cycle through several), "+overflow" when
// hops asked for a VC the rule lacks.
func verdict(t *testing.T, c Config) string {
	t.Helper()
	r := audit(t, c)
	v := "acyclic"
	if !r.Acyclic {
		checkCycle(t, c.Graph, r)
		v = "through"
		if r.CycleGroups == 1 {
			v = "inside"
		}
	}
	if r.Overflow > 0 {
		v += "+overflow"
	}
	return v
}

// TestRSIRulesUnderDOR pins the seed 000 §IV-B verdicts of the paper's
// VC rule (rsi-paper) and the phase rule under both routings inside
// super nodes, minimal two-level routing. With every minimal port the
// phase rule (all hops on VC 0 without a misroute) is cyclic inside a
// super node: a 4×4 flattened butterfly or a 4-cube routed by every
// minimal port is cyclic on one VC. Dimension order removes those cycles
// (one super node alone is acyclic on one VC) but not the chain through
// the super nodes — a local hop to a gateway, the global cable, a local
// hop after it, the next gateway — that rsi-paper also has, so both rules
// stay cyclic under both routings. rsi-paper overflows on HR (up to 4
// local hops in a super node for 2 VCs). A VC per global hop crossed
// (global-hops, 2 VCs used) is deadlock-free under dimension order.
func TestRSIRulesUnderDOR(t *testing.T) {
	cases := []struct {
		layer1            string
		superNodes        int
		paperAny, paperDO string
		phaseAny, phaseDO string
	}{
		{"BR", 3, "through", "through", "inside", "through"},
		{"HR", 3, "inside+overflow", "through+overflow", "inside", "through"},
		{"BR", 8, "through", "through", "inside", "through"},
		{"HR", 8, "inside+overflow", "through+overflow", "inside", "through"},
	}
	for _, c := range cases {
		cfgs := rsiConfigs(t, c.layer1, c.superNodes)
		got := []string{}
		for _, pol := range []string{"rsi-paper", "phase", "global-hops"} {
			for _, cfg := range cfgs {
				cfg.Policy = policy(t, pol)
				got = append(got, verdict(t, cfg))
			}
		}
		want := []string{c.paperAny, c.paperDO, c.phaseAny, c.phaseDO, "inside", "acyclic"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s-%d: rsi-paper, phase, global-hops (any, dor) = %v, want %v", c.layer1, c.superNodes, got, want)
		}
	}
}

// TestRSIRulesUnderDORWithLAR: one LAR misroute (no U-turn) keeps both
// rules cyclic under both routings, on a cycle inside one super node: a
// misroute to a layer-1 neighbour followed by the minimal hop back, both
// on the phase rule's VC 1 (rsi-paper also overflows).
func TestRSIRulesUnderDORWithLAR(t *testing.T) {
	for _, l1 := range []string{"BR", "HR"} {
		cfgs := rsiConfigs(t, l1, 3)
		for i, cfg := range cfgs {
			for _, m := range []Misroute{LAROwn, LARToward} {
				cfg.Misroute = m
				cfg.Policy = policy(t, "rsi-paper")
				if v := verdict(t, cfg); v != "inside+overflow" {
					t.Fatalf("%s-3 routing %d, rsi-paper + %s: %s", l1, i, m, v)
				}
				cfg.Policy = policy(t, "phase")
				r := audit(t, cfg)
				if r.Acyclic || r.CycleGroups != 1 || (i == 1 && len(r.Cycle.Channels) != 2) {
					t.Fatalf("%s-3 routing %d, phase + %s: %+v", l1, i, m, r)
				}
				for _, vc := range r.Cycle.VLs {
					if i == 1 && vc != 1 {
						t.Fatalf("%s-3 dor, phase + %s: cycle %v not on VC 1", l1, m, r.Cycle.Names)
					}
				}
			}
		}
	}
}

// TestDORInsideOneSuperNode: a single super node routed by dimension
// order is acyclic on one VC (BR: 4×4 flattened butterfly, HR: e-cube on
// the 4-cube), while every minimal port is not; so the cycles dimension
// order leaves on RSI run through several super nodes.
func TestDORInsideOneSuperNode(t *testing.T) {
	for _, l1 := range []string{"BR", "HR"} {
		cfgs := rsiConfigs(t, l1, 1)
		for i, want := range []string{"inside", "acyclic"} {
			cfg := cfgs[i]
			cfg.Policy = policy(t, "one-vc")
			if v := verdict(t, cfg); v != want {
				t.Fatalf("%s, one super node, routing %d, one VC: %s, want %s", l1, i, v, want)
			}
		}
	}
}
