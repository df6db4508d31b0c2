package cdg_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/cdg"
	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/internal/enginetest"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/routing"
	"github.com/nuesm/nuesm/topo"
)

// Known answers: engines whose tables are known to close (or not to close)
// a dependency cycle, and hand-made routings with each kind of delivery
// failure. Every report is also compared with enginetest.Reference.

func routeWith(t *testing.T, engine string, g *fabric.Graph) *lft.Routing {
	t.Helper()
	e, err := routing.Lookup(engine)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Route(context.Background(), g, routing.Options{})
	if err != nil {
		t.Fatalf("%s: %v", engine, err)
	}
	return r
}

func TestKnownAnswerCycles(t *testing.T) {
	gen := must(t)
	ring5 := compileFabric(t, gen(topo.Ring(5, 1, nil)))
	torus := compileFabric(t, gen(topo.Torus([]int{4, 4}, 1, false)))
	for _, c := range []struct {
		engine string
		g      *fabric.Graph
		cyclic bool
		vls    int
	}{
		// Shortest paths on a 5-ring all go two hops the same way round
		// and close a cycle of the 5 channels in each direction.
		{"minhop", ring5, true, 1},
		// Dimension order without dateline: the rings of 4 close cycles.
		{"dor-nodateline", torus, true, 1},
		// With dateline VL changes: acyclic on 2 VLs.
		{"dor", torus, false, 2},
	} {
		t.Run(c.engine, func(t *testing.T) {
			r := routeWith(t, c.engine, c.g)
			rep, err := cdg.Verify(c.g, r, cdg.Options{MaxVLs: c.vls})
			if rep == nil {
				t.Fatal(err)
			}
			compareWithReference(t, c.g, rep, enginetest.Reference(c.g, r, enginetest.RefOptions{}), 10)
			if rep.Delivered != rep.Pairs || rep.VLsUsed != c.vls || r.NumVLs != c.vls {
				t.Fatalf("delivered %d of %d, VLs used %d, claimed %d; want all, %d VLs\n%s", rep.Delivered, rep.Pairs, rep.VLsUsed, r.NumVLs, c.vls, rep)
			}
			if !c.cyclic {
				if err != nil {
					t.Fatalf("want an acyclic CDG: %v\n%s", err, rep)
				}
				if rep.CrossVL == 0 {
					t.Errorf("dateline routing without VL changes along paths")
				}
				if _, err := cdg.Verify(c.g, r, cdg.Options{MaxVLs: c.vls - 1}); !errors.Is(err, cdg.ErrVLLimit) {
					t.Errorf("VL limit %d: err = %v, want ErrVLLimit", c.vls-1, err)
				}
				return
			}
			var ce *cdg.CycleError
			if !errors.As(err, &ce) || !errors.Is(err, cdg.ErrCycle) || ce != rep.Cycle {
				t.Fatalf("err = %v, want the report's *CycleError", err)
			}
			checkCycle(t, c.g, ce, nil)
			// A cycle of one-VL shortest paths stays in one ring: its
			// channels all turn the same way round a ring of switches.
			seen := map[int32]bool{}
			for _, ch := range ce.Channels {
				if seen[c.g.Tail[ch]] {
					t.Errorf("cycle visits switch %s twice", c.g.SwitchName(c.g.Tail[ch]))
				}
				seen[c.g.Tail[ch]] = true
			}
			if want := fmt.Sprintf("dependency cycle of %d channels", len(ce.Channels)); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			t.Logf("%s cycle:\n%s", c.engine, ce.Long())
		})
	}
}

// lineRouting is a line of six switches (two CAs each), sw[x] the switch
// at position x, and a working routing of it.
func lineRouting(t *testing.T) (*fabric.Graph, [6]int32, *lft.Routing) {
	t.Helper()
	g := compileFabric(t, must(t)(topo.Torus([]int{6}, 2, true)))
	if g.NumSwitches() != 6 || len(g.Terms) != 12 {
		t.Fatalf("line: %d switches, %d CAs", g.NumSwitches(), len(g.Terms))
	}
	var sw [6]int32
	for x := range sw {
		sw[x] = -1
	}
	for s := int32(0); s < 6; s++ {
		var x int
		if _, err := fmt.Sscanf(g.SwitchName(s)[strings.LastIndex(g.SwitchName(s), "(")+1:], "%d)", &x); err != nil {
			t.Fatalf("switch %q: %v", g.SwitchName(s), err)
		}
		sw[x] = s
	}
	if slices.Contains(sw[:], -1) {
		t.Fatalf("line positions %v", sw)
	}
	base := lft.New(g, "line")
	rng := rand.New(rand.NewPCG(1, 1))
	for lid := 1; lid <= g.MaxLID(); lid++ {
		s, term := g.Owner(lid)
		dport := uint8(0)
		if term >= 0 {
			dport = g.Terms[term].SwitchPort
		}
		base.SetPort(s, lid, dport)
		for u, c := range randomTree(g, rng, s, true) {
			if c >= 0 {
				base.SetPort(int32(u), lid, g.OutPort[c])
			}
		}
	}
	if rep, err := cdg.Verify(g, base, cdg.Options{}); err != nil {
		t.Fatalf("base routing: %v\n%s", err, rep)
	}
	return g, sw, base
}

// brokenDelivery is one way of breaking the line's routing towards a CA
// on its first switch.
type brokenDelivery struct {
	name   string
	x      int   // switch position whose entry changes
	port   uint8 // new entry
	x2     int   // a second change (loop), -1 if none
	port2  uint8
	reason enginetest.Reason
	at     []int // positions the failure may be reported at
	fail   []int // positions of the switches whose path fails
}

// TestDeliveryFailureReasons breaks a working routing of a line of six
// switches (two CAs each) towards one CA on the first switch in each way
// the verifier distinguishes.
func TestDeliveryFailureReasons(t *testing.T) {
	g, sw, base := lineRouting(t)
	// The destination: the first CA on the switch at position 0.
	dst := g.Terms[g.TermsOf(sw[0])[0]]
	other := g.Terms[g.TermsOf(sw[0])[1]]
	toward := func(x, y int) uint8 { // port of switch x towards switch y
		for c := g.Off[sw[x]]; c < g.Off[sw[x]+1]; c++ {
			if g.Head[c] == sw[y] {
				return g.OutPort[c]
			}
		}
		t.Fatalf("no cable %d-%d", x, y)
		return 0
	}
	free := uint8(0) // an uncabled port of the switch at the far end
	end := g.F.Nodes[g.Switches[sw[5]]]
	for p := 1; p < len(end.Ports); p++ {
		if !end.Ports[p].Cabled() {
			free = uint8(p)
		}
	}
	if free == 0 {
		t.Fatal("the end switch has no free port")
	}
	hostOf1 := g.Terms[g.TermsOf(sw[1])[0]].SwitchPort
	for _, c := range []brokenDelivery{
		{"loop", 2, toward(2, 3), 3, toward(3, 2), enginetest.Loop, []int{2, 3}, []int{2, 3, 4, 5}},
		{"dead end", 1, lft.NoPort, -1, 0, enginetest.NoRoute, []int{1}, []int{1, 2, 3, 4, 5}},
		{"wrong CA", 1, hostOf1, -1, 0, enginetest.WrongNode, []int{1}, []int{1, 2, 3, 4, 5}},
		{"port 0 before the destination", 3, 0, -1, 0, enginetest.WrongNode, []int{3}, []int{3, 4, 5}},
		{"wrong final port", 0, other.SwitchPort, -1, 0, enginetest.WrongPort, []int{0}, []int{0, 1, 2, 3, 4, 5}},
		{"final port 0xFF", 0, lft.NoPort, -1, 0, enginetest.NoRoute, []int{0}, []int{0, 1, 2, 3, 4, 5}},
		{"port beyond the switch", 2, 200, -1, 0, enginetest.BadPort, []int{2}, []int{2, 3, 4, 5}},
		{"uncabled port", 5, free, -1, 0, enginetest.Uncabled, []int{5}, []int{5}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := base.Clone()
			r.SetPort(sw[c.x], int(dst.LID), c.port)
			if c.x2 >= 0 {
				r.SetPort(sw[c.x2], int(dst.LID), c.port2)
			}
			for _, opt := range []cdg.Options{{}, {SwitchDelivery: true}} {
				checkBrokenDelivery(t, g, sw, r, int(dst.LID), c, opt)
			}
		})
	}
}

// checkBrokenDelivery verifies r, broken as c says towards lid, and
// checks the verifier's count, kind and first example of the failures
// against the reference.
func checkBrokenDelivery(t *testing.T, g *fabric.Graph, sw [6]int32, r *lft.Routing, lid int, c brokenDelivery, opt cdg.Options) {
	t.Helper()
	rep, err := cdg.Verify(g, r, opt)
	if rep == nil || !errors.Is(err, cdg.ErrUndelivered) {
		t.Fatalf("err = %v, want ErrUndelivered", err)
	}
	compareWithReference(t, g, rep, enginetest.Reference(g, r, enginetest.RefOptions{SwitchDelivery: opt.SwitchDelivery}), 10)
	// Two CAs per failing switch, but the destination is no source of
	// its own LID; with SwitchDelivery the switches themselves too.
	n := int64(2 * len(c.fail))
	if c.fail[0] == 0 {
		n--
	}
	if opt.SwitchDelivery {
		n += int64(len(c.fail))
	}
	failed := rep.Pairs - rep.Delivered
	loops := c.reason == enginetest.Loop
	if failed != n || (rep.Loops == failed) != loops || (rep.DeadEnds == failed) == loops {
		t.Fatalf("%+v: %d failed (%d loops, %d dead ends), want %d %s\n%s", opt, failed, rep.Loops, rep.DeadEnds, n, c.reason.String(), rep)
	}
	e := rep.Examples[0]
	var at []string
	for _, x := range c.at {
		at = append(at, fmt.Sprintf("%s at switch %q", c.reason.String(), g.SwitchName(sw[x])))
	}
	if e.DLID != lid || !slices.Contains(at, e.Reason) {
		t.Fatalf("first example %+v, want LID %d and one of %q", e, lid, at)
	}
	if !strings.Contains(err.Error(), e.Reason) {
		t.Errorf("error %q does not show the first example", err)
	}
}

// TestVerifyRejectsMalformedTables: tables no InfiniBand routing can hold
// are refused with an error and no report, instead of panicking in a
// worker goroutine (SL 200 with per-port SL2VL tables did) or passing
// (an SL mapped to VL 40 was invisible to the VL limit: "0 VLs used").
func TestVerifyRejectsMalformedTables(t *testing.T) {
	g := compileFabric(t, must(t)(topo.Ring(4, 1, nil)))
	base := lft.New(g, "ring")
	rng := rand.New(rand.NewPCG(3, 3))
	for lid := 1; lid <= g.MaxLID(); lid++ {
		s, term := g.Owner(lid)
		dport := uint8(0)
		if term >= 0 {
			dport = g.Terms[term].SwitchPort
		}
		base.SetPort(s, lid, dport)
		for u, c := range randomTree(g, rng, s, true) {
			if c >= 0 {
				base.SetPort(int32(u), lid, g.OutPort[c])
			}
		}
	}
	base.SL2VL.Switch = make([]*lft.PortSL2VL, g.NumSwitches())
	for s := range base.SL2VL.Switch {
		base.SL2VL.Switch[s] = lft.NewPortSL2VL(g.F.Nodes[g.Switches[s]].NumPorts(), base.SL2VL.Default)
	}
	if _, err := cdg.Verify(g, base, cdg.Options{MaxVLs: 1}); !errors.Is(err, cdg.ErrCycle) {
		t.Fatalf("base routing: err = %v, want only the ring's cycle", err)
	}
	for _, c := range []struct {
		name   string
		mutate func(r *lft.Routing)
		want   string
	}{
		{"SL 200 per destination", func(r *lft.Routing) { r.SL.ByDest[g.Terms[0].LID] = 200 }, "SL 200 for LID"},
		{"SL 16 per source", func(r *lft.Routing) { r.SL.EnableBySrc(g.NumSwitches()); r.SL.SrcRow(1)[2] = 16 }, "SL 16 from switch 1 to LID 2"},
		{"SL 99 per pair", func(r *lft.Routing) { r.SL.Pair = map[uint32]uint8{5<<16 | 6: 99, 7<<16 | 8: 3} }, "SL 99 from LID 5 to LID 6"},
		{"VL 40", func(r *lft.Routing) { r.SL2VL.Switch[2].Set(1, 2, 0, 40) }, "maps to VL 40"},
		{"short per-source table", func(r *lft.Routing) { r.SL.BySrc = make([]uint8, 3) }, "per-source SL table"},
		{"SL2VL for fewer switches", func(r *lft.Routing) { r.SL2VL.Switch = r.SL2VL.Switch[:2] }, "SL2VL tables for 2 switches"},
		{"short SL2VL table", func(r *lft.Routing) { r.SL2VL.Switch[3].VL = r.SL2VL.Switch[3].VL[:10] }, "SL2VL table of switch 3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := base.Clone()
			c.mutate(r)
			rep, err := cdg.Verify(g, r, cdg.Options{MaxVLs: 1})
			if rep != nil || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("report %v, err %v; want no report and an error saying %q", rep != nil, err, c.want)
			}
		})
	}
}
