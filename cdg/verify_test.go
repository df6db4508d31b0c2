package cdg

import (
	"errors"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/lft"
	"github.com/nuesm/nuesm/topo"
)

// shortestRouting routes every LID along BFS shortest paths, each switch
// taking its lowest-numbered port towards the destination (MinHop without
// balancing). Deadlock-prone on rings: a test fixture.
func shortestRouting(t testing.TB, g *fabric.Graph) *lft.Routing {
	t.Helper()
	r := lft.New(g, "test-shortest")
	S := g.NumSwitches()
	dist, queue := make([]int32, S), make([]int32, S)
	for lid := 1; lid <= g.MaxLID(); lid++ {
		sw, term := g.Owner(lid)
		dsw, dport := sw, uint8(0)
		if term >= 0 {
			dsw, dport = g.Terms[term].Switch, g.Terms[term].SwitchPort
		}
		if dsw < 0 {
			continue
		}
		g.BFS(dsw, dist, queue) // symmetric graph: distance to = distance from
		for u := int32(0); int(u) < S; u++ {
			if u == dsw {
				r.SetPort(u, lid, dport)
				continue
			}
			if dist[u] < 0 {
				continue
			}
			for c := g.Off[u]; c < g.Off[u+1]; c++ {
				if dist[g.Head[c]] == dist[u]-1 {
					r.SetPort(u, lid, g.OutPort[c])
					break
				}
			}
		}
	}
	return r
}

func compile(t testing.TB, tp *topo.Topology, err error) *fabric.Graph {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestRing5ShortestPathsCycle(t *testing.T) {
	tp, err := topo.Ring(5, 1, nil)
	g := compile(t, tp, err)
	r := shortestRouting(t, g)
	rep, err := Verify(g, r, Options{})
	if rep == nil {
		t.Fatal(err)
	}
	if rep.Delivered != rep.Pairs || rep.Pairs != 5*4+5*5 {
		t.Fatalf("delivered %d of %d, want all of %d", rep.Delivered, rep.Pairs, 5*4+5*5)
	}
	var ce *CycleError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCycle) {
		t.Fatalf("err = %v, want a cycle", err)
	}
	// Shortest paths on a 5-ring go two hops each way: both directions
	// close a cycle of 5 channels.
	if len(ce.Channels) != 5 {
		t.Fatalf("cycle %v, want 5 channels", ce)
	}
	for i, c := range ce.Channels {
		next := ce.Channels[(i+1)%len(ce.Channels)]
		if g.Head[c] != g.Tail[next] {
			t.Fatalf("cycle is not a path: %s then %s", g.ChannelName(c), g.ChannelName(next))
		}
	}
	if !strings.Contains(rep.String(), "cycle of 5 channels") {
		t.Fatalf("report does not show the cycle:\n%s", rep)
	}
}

func TestRing5TwoVLsAcyclic(t *testing.T) {
	// Shortest paths on a 5-ring with a dateline: the path to d uses VL1
	// when it crosses the cable 4->0 or 0->4 … here approximated per
	// destination: destinations 0..2 on SL0, 3..4 on SL1 is NOT enough in
	// general, so use the classic per-source split: a path that wraps past
	// switch 0 uses VL1. Built with BySrc SLs.
	tp, err := topo.Ring(5, 1, nil)
	g := compile(t, tp, err)
	r := shortestRouting(t, g)
	r.NumVLs = 2
	r.SL.EnableBySrc(g.NumSwitches())
	for u := int32(0); u < 5; u++ {
		for lid := 1; lid <= g.MaxLID(); lid++ {
			sw, term := g.Owner(lid)
			d := sw
			if term >= 0 {
				d = g.Terms[term].Switch
			}
			// Does the path u -> d cross the cable between switch 4 and 0?
			cross := false
			for x := u; x != d; {
				c := g.ChannelAt(x, r.Port(x, lid))
				if (g.Tail[c] == 4 && g.Head[c] == 0) || (g.Tail[c] == 0 && g.Head[c] == 4) {
					cross = true
				}
				x = g.Head[c]
			}
			if cross {
				r.SL.SrcRow(u)[lid] = 1
			}
		}
	}
	rep, err := Verify(g, r, Options{MaxVLs: 2})
	if err != nil {
		t.Fatalf("dateline ring rejected: %v\n%s", err, rep)
	}
	if rep.VLsUsed != 2 {
		t.Fatalf("VLs used %d, want 2", rep.VLsUsed)
	}
	if _, err := Verify(g, r, Options{MaxVLs: 1}); !errors.Is(err, ErrVLLimit) {
		t.Fatalf("VL limit 1: err = %v, want ErrVLLimit", err)
	}
}

func TestDeliveryFailures(t *testing.T) {
	tp, err := topo.Ring(6, 2, nil)
	g := compile(t, tp, err)
	base := shortestRouting(t, g)
	if rep, err := Verify(g, base, Options{}); rep == nil || rep.Delivered != rep.Pairs {
		t.Fatalf("base routing: %v", err)
	}
	lid := int(g.Terms[0].LID) // a CA on switch 0
	// Dead end: erase the entry on the switch opposite the destination.
	r := base.Clone()
	r.SetPort(3, lid, lft.NoPort)
	rep, err := Verify(g, r, Options{})
	if !errors.Is(err, ErrUndelivered) || rep.DeadEnds != 2 || rep.Loops != 0 {
		t.Fatalf("dead end: err=%v dead=%d loops=%d", err, rep.DeadEnds, rep.Loops)
	}
	if len(rep.Examples) == 0 || !strings.Contains(rep.Examples[0].Reason, "no route") {
		t.Fatalf("examples %+v", rep.Examples)
	}
	// Loop: switches 2 and 3 point at each other.
	r = base.Clone()
	c23 := int32(-1)
	for c := g.Off[2]; c < g.Off[3]; c++ {
		if g.Head[c] == 3 {
			c23 = c
		}
	}
	r.SetPort(2, lid, g.OutPort[c23])
	r.SetPort(3, lid, g.InPort[c23])
	rep, err = Verify(g, r, Options{})
	if !errors.Is(err, ErrUndelivered) || rep.Loops != 4 {
		t.Fatalf("loop: err=%v loops=%d (want 4: two sources on each of 2 switches)", err, rep.Loops)
	}
	// Wrong port at the destination switch.
	r = base.Clone()
	r.SetPort(0, lid, g.Terms[1].SwitchPort)
	if _, err := Verify(g, r, Options{}); !errors.Is(err, ErrUndelivered) {
		t.Fatalf("wrong final port accepted")
	}
}
