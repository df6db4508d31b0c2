package vcaudit

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/studies/rsi"
	"github.com/nuesm/nuesm/studies/vcpolicy"
	"github.com/nuesm/nuesm/topo"
)

func gen(t *testing.T, kind string, params map[string]string) (*topo.Topology, *fabric.Graph) {
	t.Helper()
	tp, err := topo.Generate(kind, params)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return tp, g
}

func policy(t *testing.T, s string) vcpolicy.Policy {
	t.Helper()
	p, err := vcpolicy.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func audit(t *testing.T, cfg Config) *Result {
	t.Helper()
	r, err := Audit(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkCycle asserts that the reported cycle is a closed walk of
// channels: each one enters the switch the next one leaves.
func checkCycle(t *testing.T, g *fabric.Graph, r *Result) {
	t.Helper()
	if r.Acyclic || r.Cycle == nil || len(r.Cycle.Channels) == 0 {
		t.Fatalf("no cycle reported: %+v", r)
	}
	ch := r.Cycle.Channels
	for i, c := range ch {
		if next := ch[(i+1)%len(ch)]; g.Head[c] != g.Tail[next] {
			t.Fatalf("cycle is not a walk: %s then %s", g.ChannelName(c), g.ChannelName(next))
		}
	}
}

// TestRingByHand: a 5-ring routed minimally (every pair at most 2 hops,
// one shortest path each) makes, with one VC, exactly the 10 turns
// c(i→i+1) → c(i+1→i+2) in both directions: two 5-cycles, the classic
// ring deadlock. With VC = hops taken (2 VCs) every turn goes from VC0 to
// VC1, so the same 10 edges are acyclic, on 20 (channel, VC) vertices.
func TestRingByHand(t *testing.T) {
	_, g := gen(t, "ring", map[string]string{"switches": "5"})
	r := audit(t, Config{Graph: g, Policy: policy(t, "one-vc")})
	if r.Edges != 10 || r.Vertices != 10 || r.MaxPath != 2 || len(r.Cycle.Channels) != 5 {
		t.Fatalf("one VC: %+v; want 10 edges, 10 vertices, a 5-cycle", r)
	}
	checkCycle(t, g, r)
	r = audit(t, Config{Graph: g, Policy: policy(t, "hops:2")})
	if !r.DeadlockFree() || r.Edges != 10 || r.Vertices != 20 {
		t.Fatalf("hops:2: %+v; want acyclic, 10 edges, 20 vertices", r)
	}
}

// TestDragonflyVCs: seed 002 §V-E. Two-level minimal routing (l g l) plus
// the conditional non-minimal alternative at the source (g l g l) with one
// VC is cyclic through the groups; the 2-VC rule (VC 1 from the hop
// entering the destination group) is acyclic for both; the per-class
// reading (k-th local hop on VC k) is cyclic; and letting LAR misroute at
// any hop breaks the 2-VC rule.
func TestDragonflyVCs(t *testing.T) {
	for _, p := range []string{"2", "4"} {
		tp, g := gen(t, "dragonfly", map[string]string{"p": p, "a": map[string]string{"2": "4", "4": "8"}[p], "h": p})
		tb, err := rsi.Build(g, tp.Group)
		if err != nil {
			t.Fatal(err)
		}
		base := Config{Graph: g, Group: tp.Group, Tables: tb}
		run := func(pol string, m Misroute) *Result {
			c := base
			c.Policy, c.Misroute = policy(t, pol), m
			return audit(t, c)
		}
		r := run("one-vc", SourceGlobal)
		checkCycle(t, g, r)
		globals := 0
		for _, c := range r.Cycle.Channels {
			if tp.Group[g.Tail[c]] != tp.Group[g.Head[c]] {
				globals++
			}
		}
		if globals < 2 {
			t.Fatalf("p=%s: one-VC cycle crosses %d global channels, want a cycle through groups", p, globals)
		}
		for _, m := range []Misroute{NoMisroute, SourceGlobal} {
			if r := run("df-2vc", m); !r.DeadlockFree() || r.VCsWanted != 2 {
				t.Fatalf("p=%s df-2vc %v: %+v; want acyclic with 2 VCs", p, m, r)
			}
		}
		checkCycle(t, g, run("df-per-class", SourceGlobal))
		checkCycle(t, g, run("df-2vc", LAROwn))
		if r := run("global-hops", SourceGlobal); !r.DeadlockFree() || r.MaxPath != 4 {
			t.Fatalf("p=%s: global-hops + source-global %+v; want acyclic, paths of at most 4 hops", p, r)
		}
	}
}

// TestFlattenedButterflyNeedsNVCs: seed 002 §V-E, fully adaptive minimal
// routing on an n-dimensional flattened butterfly needs n VCs: VC = hops
// taken with n VCs is acyclic, with n−1 (top VC saturating) it is not.
func TestFlattenedButterflyNeedsNVCs(t *testing.T) {
	for n, dims := range map[int]string{2: "4x4", 3: "3x3x3"} {
		_, g := gen(t, "fbfly", map[string]string{"dims": dims})
		r := audit(t, Config{Graph: g, Policy: vcpolicy.HopsPolicy(n)})
		if !r.DeadlockFree() || r.MaxPath != n {
			t.Fatalf("%s with %d VCs: %+v", dims, n, r)
		}
		checkCycle(t, g, audit(t, Config{Graph: g, Policy: vcpolicy.HopsPolicy(n - 1)}))
	}
}

// TestRSIRules: BR with 3 super nodes (seed 000 §IV-B). The paper's rule
// (local VC = hops in the super node, global VC = global hops) leaves a
// cycle even under minimal two-level routing: the local VC restarts in
// every super node, so a local hop toward a gateway and a local hop after
// a global one share VC 0 and chain through the super nodes. Gunther's
// total-hop rule with a saturating top VC needs 3 VCs minimal (paths of
// up to 2 local + 1 global + 2 local hops; 2 VCs leave a cycle) and, with
// one LAR misroute (no U-turn, paths of up to 7 hops), 7.
func TestRSIRules(t *testing.T) {
	tp, g := gen(t, "rsi", map[string]string{"layer1": "BR", "supernodes": "3"})
	tb, err := rsi.Build(g, tp.Group)
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Graph: g, Group: tp.Group, Tables: tb, NoUTurn: true}
	run := func(pol string, m Misroute) *Result {
		c := base
		c.Policy, c.Misroute = policy(t, pol), m
		return audit(t, c)
	}
	r := run("rsi-paper", NoMisroute)
	checkCycle(t, g, r)
	sns := map[int]bool{}
	for _, c := range r.Cycle.Channels {
		sns[tp.Group[g.Tail[c]]] = true
	}
	if len(sns) < 2 || r.Overflow != 0 {
		t.Fatalf("rsi-paper minimal: cycle within %d super nodes, overflow %d", len(sns), r.Overflow)
	}
	if r := run("hops:3", NoMisroute); !r.DeadlockFree() || r.MaxPath != 5 {
		t.Fatalf("hops:3 minimal: %+v", r)
	}
	checkCycle(t, g, run("hops:2", NoMisroute))
	if r := run("hops:7", LAROwn); !r.DeadlockFree() || r.MaxPath != 7 {
		t.Fatalf("hops:7 lar-own: %+v", r)
	}
	checkCycle(t, g, run("hops:6", LAROwn))
	if r := run("rsi-paper", LAROwn); r.Overflow == 0 || r.VCsWanted != 4 {
		t.Fatalf("rsi-paper lar-own: %+v; want hops asking for VC 3", r)
	}
}

func TestAuditErrors(t *testing.T) {
	_, g := gen(t, "ring", map[string]string{"switches": "4"})
	bad := []Config{
		{},
		{Graph: g, Policy: vcpolicy.Policy{Name: "x", VCs: 0}},
		{Graph: g, Policy: vcpolicy.HopsPolicy(2), Group: []int{0}},
		{Graph: g, Policy: vcpolicy.HopsPolicy(2), Group: []int{0, 0, -1, 0}},
		{Graph: g, Policy: vcpolicy.HopsPolicy(2), Misroute: 9},
		{Graph: g, Policy: vcpolicy.HopsPolicy(2), MaxHops: 500},
	}
	for i, c := range bad {
		if _, err := Audit(c); err == nil {
			t.Fatalf("config %d accepted", i)
		}
	}
	tp, rg := gen(t, "rsi", map[string]string{"layer1": "full-3", "supernodes": "2"})
	tb, err := rsi.Build(rg, tp.Group)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []Config{
		{Graph: g, Tables: tb, Policy: vcpolicy.HopsPolicy(2)},
		{Graph: rg, Tables: tb, Group: make([]int, rg.NumSwitches()), Policy: vcpolicy.HopsPolicy(2)},
	} {
		if _, err := Audit(c); err == nil {
			t.Fatalf("tables config %d accepted", i)
		}
	}
	if r, err := Audit(Config{Graph: rg, Tables: tb, Policy: vcpolicy.HopsPolicy(3)}); err != nil || !r.DeadlockFree() {
		t.Fatalf("groups from the tables: %+v, %v", r, err)
	}
	if _, err := ParseMisroute("sideways"); err == nil {
		t.Fatal("bad misroute accepted")
	}
}
