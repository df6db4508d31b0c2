package rsi

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nuesm/nuesm/topo"
)

// tiny is the hand-checked network: 3 super nodes of 3 fully connected
// nodes, one cable per pair, gateways spread (seed 000 §III). Super node s
// numbers its partners t' = 0, 1 and puts cable t' on node t', so the
// cables are A0–B0, A1–C0 and B1–C1 (A, B, C = super nodes 0, 1, 2).
func tiny(t *testing.T) *Tables {
	t.Helper()
	tb := build(t, topo.RSIConfig{Layer1: "full-3", SuperNodes: 3, LinksPerPair: 1})
	g := tb.G
	want := map[[2]int32]bool{{0, 3}: true, {1, 6}: true, {4, 7}: true}
	for c := int32(0); int(c) < g.NumChannels(); c++ {
		u, v := g.Tail[c], g.Head[c]
		if tb.Group[u] != tb.Group[v] && u < v && !want[[2]int32{u, v}] {
			t.Fatalf("unexpected global cable %s", g.ChannelName(c))
		}
	}
	return tb
}

// channel returns the channel from u to v.
func channel(t *testing.T, tb *Tables, u, v int32) int32 {
	g := tb.G
	for c := g.Off[u]; c < g.Off[u+1]; c++ {
		if g.Head[c] == v {
			return c
		}
	}
	t.Fatalf("no channel %d -> %d", u, v)
	return -1
}

// TestFDFRLinkByHand fails the cable A0–B0 and checks every count by
// hand. Detection (round 0): A0 loses its only T2 port toward B and sends
// FD({B}) to A1, A2; B0 likewise FD({A}) to B1, B2 (4 packets, round 1).
// A1 and A2 reach B only through A0, so their T2[B] empties and they
// forward FD({B}) on every live port: A1 to A0, A2 and C0 (3), A2 to A0,
// A1 (2); the B side mirrors it (10 packets, round 2). Nothing else is
// covered by region {B} or {A}, so FD stops: 14 packets, 2 rounds, 8
// nodes informed (all but C2), 6 T2 entries emptied. Two-level routing
// never crosses a third super node, so the 9+9 pairs between A and B lose
// every route although C still connects them physically. Recovery: A0
// and B0 re-validate their global port, whose entry it is the only port
// of, and send FR on their 3 live ports each (6); A1, A2, B1, B2 heal the
// same way and forward (3+2+3+2 = 10); A0 and B0 already hold the port
// valid and stop. 16 FR packets, 2 rounds, tables whole.
func TestFDFRLinkByHand(t *testing.T) {
	tb := tiny(t)
	for _, rule := range []FRRule{FRLiteral, FRHealed} {
		o, err := Simulate(tb, []Failure{{Kind: FailLink, Channel: channel(t, tb, 0, 3)}}, Options{Rule: rule})
		if err != nil {
			t.Fatal(err)
		}
		if o.FDPackets != 14 || o.FDRounds != 2 || o.FRPackets != 16 || o.FRRounds != 2 || o.Invalid != 0 {
			t.Fatalf("%v: FD %d/%d rounds, FR %d/%d rounds, invalid %d; want 14/2, 16/2, 0",
				rule, o.FDPackets, o.FDRounds, o.FRPackets, o.FRRounds, o.Invalid)
		}
		wantIn := []int{2, 2, 2, 2, 2, 2, 1, 1, 0} // A0 A1 A2 B0 B1 B2 C0 C1 C2
		wantOut := []int{2, 3, 2, 2, 3, 2, 0, 0, 0}
		for x, n := range o.Nodes {
			t2 := 0
			if x < 6 {
				t2 = 1
			}
			if n.FDIn != wantIn[x] || n.FDOut != wantOut[x] || n.T2Ports != t2 || n.T2Emptied != t2 || n.T1Ports != 0 {
				t.Fatalf("%v node %d: %+v; want FD in %d out %d, T2 %d", rule, x, n, wantIn[x], wantOut[x], t2)
			}
		}
		a := o.After
		if a.Pairs != 72 || a.Disconnected != 0 || a.Lost != 18 || a.LostSilent != 0 || a.Safe != 54 || a.Unsafe != 0 {
			t.Fatalf("%v: after FD %+v; want 72 pairs, 18 lost, 54 safe", rule, a)
		}
		if r := o.Recovered; r.Lost != 0 || r.Safe != 72 {
			t.Fatalf("%v: after FR %+v", rule, r)
		}
	}
}

// TestFDFRNodeByHand fails A2 (no global cable). A0 and A1 lose their T1
// entry for A2 and send FD({A2}) on their live ports (A0: A1, B0; A1:
// A0, C0): 4 packets, 1 round; no receiver has an entry inside {A2}
// (T2[A] of B0 and C0 stays: A is not wholly lost, the paper's Fig. 6
// discussion). No live pair loses its route. Recovery: A2 restarts with
// whole tables; A0 and A1 re-validate their port to A2, the only port of
// T1[A2], and send FR on 3 ports each: 6 packets, 1 round.
func TestFDFRNodeByHand(t *testing.T) {
	tb := tiny(t)
	o, err := Simulate(tb, []Failure{{Kind: FailNode, Node: 2}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o.FDPackets != 4 || o.FDRounds != 1 || o.FRPackets != 6 || o.FRRounds != 1 || o.Invalid != 0 {
		t.Fatalf("FD %d/%d, FR %d/%d, invalid %d; want 4/1, 6/1, 0", o.FDPackets, o.FDRounds, o.FRPackets, o.FRRounds, o.Invalid)
	}
	for _, x := range []int32{0, 1} {
		if n := o.Nodes[x]; n.T1Ports != 1 || n.T1Emptied != 1 || n.FDOut != 2 || n.FROut != 3 {
			t.Fatalf("node %d: %+v", x, n)
		}
	}
	if a := o.After; a.Pairs != 56 || a.Lost != 0 || a.Safe != 56 {
		t.Fatalf("after FD %+v; want 56 safe pairs", a)
	}
	var b bytes.Buffer
	o.Write(&b, tb, false)
	for _, want := range []string{"4 packets over 1 rounds", "| rsi sn0 n0 | 0 | 1 | 2 | 1 | 1 |"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestSimulateErrors(t *testing.T) {
	tb := tiny(t)
	for _, f := range []Failure{{Kind: FailNode, Node: 99}, {Kind: FailLink, Channel: -1}, {Kind: 7}} {
		if _, err := Simulate(tb, []Failure{f}, Options{}); err == nil {
			t.Fatalf("%+v accepted", f)
		}
	}
}

// TestFDFRRestores fails every node and every cable at node 0 of BR with
// 3 and 8 super nodes: the pair classes add up, and under both FR rules
// recovery leaves no invalid entry and every pair safe again.
func TestFDFRRestores(t *testing.T) {
	for _, sn := range []int{3, 8} {
		tb := build(t, topo.RSIConfig{Layer1: "BR", SuperNodes: sn, LinksPerPair: 1})
		g := tb.G
		var fails []Failure
		for x := int32(0); int(x) < g.NumSwitches(); x++ {
			fails = append(fails, Failure{Kind: FailNode, Node: x})
		}
		for c := g.Off[0]; c < g.Off[1]; c++ {
			fails = append(fails, Failure{Kind: FailLink, Channel: c})
		}
		for _, f := range fails {
			for _, rule := range []FRRule{FRLiteral, FRHealed} {
				o, err := Simulate(tb, []Failure{f}, Options{Rule: rule})
				if err != nil {
					t.Fatal(err)
				}
				a := o.After
				if a.Pairs != a.Disconnected+a.Lost+a.Unsafe+a.Safe || o.Before.Safe != o.Before.Pairs {
					t.Fatalf("SN=%d %+v: pair counts do not add up: %+v", sn, f, a)
				}
				if o.Invalid != 0 || o.Recovered.Lost != 0 || o.Recovered.Safe != o.Recovered.Pairs {
					t.Fatalf("SN=%d %+v %v: not recovered: invalid %d, %+v", sn, f, rule, o.Invalid, o.Recovered)
				}
			}
		}
	}
}
