package addressing

import (
	"context"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// TestEqOneByHand checks the radix-8 row of every topology by hand.
//
//	clos3:  T = 4, 8 pods of 4 access switches: Eq. 1 = 7 + 3 + 4 = 14;
//	        per-switch (32 − 1) + 4 = 35; flat 8³/4 = 128; compacted 8.
//	fbfly2: k = 3 (3 + 2·2 = 7 <= 8), T = 3, rows G = 3, S = 3:
//	        2 + 2 + 3 = 7 = the ports used; per-switch 8 + 3 = 11; flat 27.
//	dragonfly: p = 2 (4p − 1 = 7), a = 4, h = 2, g = 9: 8 + 3 + 2 = 13;
//	        per-switch 35 + 2 = 37; flat 2·4·9 = 72; compacted >= 7 + 3.
func TestEqOneByHand(t *testing.T) {
	want := map[string]Rules{
		"clos3":     {Flat: 128, PerSwitch: 35, PerGroup: 14, CompactMin: 8, CompactMax: 8},
		"fbfly2":    {Flat: 27, PerSwitch: 11, PerGroup: 7, CompactMin: 7, CompactMax: 7},
		"dragonfly": {Flat: 72, PerSwitch: 37, PerGroup: 13, CompactMin: 10, CompactMax: 13},
	}
	for kind, w := range want {
		s, err := Max(kind, 8)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Rules(); got != w {
			t.Fatalf("%s: %+v, want %+v", kind, got, w)
		}
	}
	if EqOne(129, 16, 8) != 128+15+8 {
		t.Fatal("Eq. 1 on the simulated Dragonfly")
	}
}

// TestPaperClaim: seed 002 §III-A, "using 3-level hierarchical addressing
// and DF or 3D FB, it is possible to reach more than the 300,000 hosts
// ... requiring less than 4K rules"; §III-B, FB and Clos reach the port
// bound, the Dragonfly does not.
func TestPaperClaim(t *testing.T) {
	for _, k := range []string{"dragonfly", "fbfly3"} {
		s, err := Max(k, 96)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.Rules(); s.Hosts <= 300000 || r.PerGroup >= 4096 {
			t.Fatalf("%s P=96: %d hosts, %d rules", k, s.Hosts, r.PerGroup)
		}
	}
	s, _ := Max("dragonfly", 16)
	lo, hi := DragonflyCompact(s.P, s.A, s.H, s.G)
	if r := s.Rules(); lo < r.CompactMin || hi > r.CompactMax || lo <= s.Ports {
		t.Fatalf("dragonfly P=16 compacted %d–%d outside %d–%d or at the port bound %d", lo, hi, r.CompactMin, r.CompactMax, s.Ports)
	}
}

// TestShapesMatchGenerators builds the radix-8 (and 16) networks with the
// project's generators and compares hosts, switches and ports used.
func TestShapesMatchGenerators(t *testing.T) {
	build := map[string]func() (*topo.Topology, error){
		"clos3":     func() (*topo.Topology, error) { return topo.Clos3(8) },
		"fbfly2":    func() (*topo.Topology, error) { return topo.FlattenedButterfly([]int{3, 3}, 3) },
		"fbfly3":    func() (*topo.Topology, error) { return topo.FlattenedButterfly([]int{4, 4, 4}, 4) },
		"dragonfly": func() (*topo.Topology, error) { return topo.Dragonfly(2, 4, 2, 0) },
	}
	radix := map[string]int{"clos3": 8, "fbfly2": 8, "fbfly3": 16, "dragonfly": 8}
	for k, b := range build {
		tp, err := b()
		if err != nil {
			t.Fatal(err)
		}
		s, err := Max(k, radix[k])
		if err != nil {
			t.Fatal(err)
		}
		f := tp.Fabric
		if f.Count(fabric.CA) != s.Hosts || f.Count(fabric.Switch) != s.Switches || tp.Radix > s.Radix {
			t.Fatalf("%s: generator %d hosts %d switches radix %d; shape %+v", k, f.Count(fabric.CA), f.Count(fabric.Switch), tp.Radix, s)
		}
	}
}

func TestRangePrefixes(t *testing.T) {
	for _, c := range [][3]int{{3, 4, 2}, {4, 5, 1}, {0, 7, 1}, {1, 6, 4}, {0, 0, 1}, {5, 5, 1}, {0, 8, 2}} {
		if got := RangePrefixes(c[0], c[1]); got != c[2] {
			t.Fatalf("%d..%d: %d prefixes, want %d", c[0], c[1], got, c[2])
		}
	}
}

// TestDragonflyCompactByHand: p = 2, a = 4, h = 2, g = 9. Switch 0 of
// group 0 reaches groups 1–2 itself; switches 1, 2, 3 reach 3–4, 5–6,
// 7–8: each range starts odd, so 2 prefixes each: 2 + 3 + 2 + 6 = 13.
// Switch 0 of group 1: 4–5, 6–7 (aligned: 1 each), 8–0 (wraps: 2):
// 2 + 3 + 2 + 4 = 11.
func TestDragonflyCompactByHand(t *testing.T) {
	if n := dragonflySwitchRules(2, 4, 2, 9, 0, 0); n != 13 {
		t.Fatalf("group 0 switch 0: %d rules, want 13", n)
	}
	if n := dragonflySwitchRules(2, 4, 2, 9, 1, 0); n != 11 {
		t.Fatalf("group 1 switch 0: %d rules, want 11", n)
	}
	if lo, hi := DragonflyCompact(2, 4, 2, 9); lo < 10 || hi != 13 {
		t.Fatalf("range %d–%d", lo, hi)
	}
}

// TestLIDPlanByHand: the simulated Dragonfly (seed 002 Table III) needs
// 16,512 + 2,064 = 18,576 LIDs; a group holds 16 switches and 128 hosts
// (144 LIDs, 3 blocks); group 0 starts at LID 1 and ends at 144, groups
// 1..127 take 192 LIDs each from 192 on, group 128 ends at 192·128 + 143
// = 24,719, within 0xBFFF. The 300k-host DF does not fit one subnet.
func TestLIDPlanByHand(t *testing.T) {
	p := PlanLIDs(129, 144, 0)
	if p.Endpoints != 18576 || p.HierMaxLID != 24719 || !p.FitsHier || p.FlatBlocks != 291 || p.HierBlocks != 387 {
		t.Fatalf("%+v", p)
	}
	if p := PlanLIDs(463, 36+36*18, 0); p.FitsFlat || p.Subnets != 7 {
		t.Fatalf("300k DF: %+v", p)
	}
}

// TestHierarchicalLIDs assigns hierarchical LIDs to a Dragonfly, checks
// that they match the plan, and that every LFT block of a MinHop routing
// then holds one group only (none does with the generator's LIDs).
func TestHierarchicalLIDs(t *testing.T) {
	tp, err := topo.Dragonfly(2, 4, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	measure := func(f *fabric.Fabric) (*fabric.Graph, BlockStats) {
		g, err := fabric.Compile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := routing.MinHop{}.Route(context.Background(), g, routing.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Blocks(g, r, tp.Group)
		if err != nil {
			t.Fatal(err)
		}
		return g, st
	}
	_, before := measure(tp.Fabric)
	f := tp.Fabric.Clone()
	ranges, err := AssignHierarchicalLIDs(f, tp.Group)
	if err != nil {
		t.Fatal(err)
	}
	g, after := measure(f)
	s, _ := Max("dragonfly", 8)
	if plan := s.LIDs(); g.MaxLID() != plan.HierMaxLID || len(ranges) != 9 {
		t.Fatalf("max LID %d, plan %d", g.MaxLID(), plan.HierMaxLID)
	}
	for i, r := range ranges {
		if r.Last-r.First+1 != 12 || (i > 0 && r.First%LFTBlock != 0) {
			t.Fatalf("group %d: LIDs %d..%d", i, r.First, r.Last)
		}
	}
	if after.GroupPure != after.Blocks || before.GroupPure == before.Blocks || after.BlocksPerGrp != 1 {
		t.Fatalf("before %+v, after %+v", before, after)
	}
	if _, err := AssignHierarchicalLIDs(f, []int{0}); err == nil {
		t.Fatal("short group slice accepted")
	}
}

func TestMaxErrors(t *testing.T) {
	for _, c := range []struct {
		k string
		r int
	}{{"clos3", 7}, {"fbfly2", 2}, {"fbfly9", 96}, {"dragonfly", 2}, {"torus", 8}} {
		if _, err := Max(c.k, c.r); err == nil {
			t.Fatalf("%s radix %d accepted", c.k, c.r)
		}
	}
}
