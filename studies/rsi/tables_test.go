package rsi

import (
	"context"
	"math"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// build generates an RSI network and its tables.
func build(t testing.TB, c topo.RSIConfig) *Tables {
	t.Helper()
	tp, err := c.Build()
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := Build(g, tp.Group)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestPaper47vs17 is the known answer of seed 000 §IV-A: with 3 super
// nodes of 16 nodes a flat table has 47 entries per node, the two-level
// tables 15 + 2. The flat count comes from a real MinHop LFT (94 routed
// LIDs of other nodes plus the node's own two: router and processor).
func TestPaper47vs17(t *testing.T) {
	for _, links := range []int{1, 16} {
		tb := build(t, topo.RSIConfig{Layer1: "BR", SuperNodes: 3, LinksPerPair: links})
		flat, err := FlatLFT(context.Background(), tb.G)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tb.Sizes(flat) {
			if s.FlatNodes != 47 || s.T1 != 15 || s.T2 != 2 || s.Hier() != 17 || s.FlatLIDs != 96 {
				t.Fatalf("links %d node %d: flat %d (LIDs %d), T1 %d, T2 %d; want 47, 96, 15, 2",
					links, s.Node, s.FlatNodes, s.FlatLIDs, s.T1, s.T2)
			}
		}
	}
}

// TestTwoLevelHops reproduces the two-level routing hop counts of the
// topo tests (rsiTwoLevel): DF 2.436, HR 4.661 (max 9), SR 3.923, BR 3.717,
// the paper's 2.5, 4.6, 4.0, 3.7 (§VI), under both gateway rules.
func TestTwoLevelHops(t *testing.T) {
	want := []struct {
		layer1 string
		avg    float64
		max    int
		flat   int
		hier   int
	}{{"DF", 2.436, 3, 39, 4 + 7}, {"HR", 4.661, 9, 127, 15 + 7}, {"SR", 3.923, 5, 143, 17 + 7}, {"BR", 3.717, 5, 127, 15 + 7}}
	for _, w := range want {
		for _, gw := range []topo.RSIGateways{topo.RSISpread, topo.RSIPack} {
			tb := build(t, topo.RSIConfig{Layer1: w.layer1, SuperNodes: 8, LinksPerPair: 1, Gateways: gw})
			h := tb.Hops()
			if h.Unroutable != 0 || math.Abs(h.AvgMin-w.avg) > 0.0005 || h.AvgMin != h.AvgMax || h.Max != w.max {
				t.Fatalf("%s %v: %+v, want avg %.3f max %d", w.layer1, gw, h, w.avg, w.max)
			}
			for _, s := range tb.Sizes(nil) {
				if s.Hier() != w.hier {
					t.Fatalf("%s node %d: %d hierarchical entries, want %d", w.layer1, s.Node, s.Hier(), w.hier)
				}
			}
		}
	}
}

// TestEntriesMinimal checks every entry against BFS: a T1 port leads one
// hop closer inside the super node, a T2 port one hop closer to a cable
// into the target super node, and every such port is present.
func TestEntriesMinimal(t *testing.T) {
	tb := build(t, topo.RSIConfig{Layer1: "BR", SuperNodes: 4, LinksPerPair: 2})
	g := tb.G
	for x := int32(0); int(x) < g.NumSwitches(); x++ {
		for d := int32(0); int(d) < g.NumSwitches(); d++ {
			if x == d {
				if tb.Lookup(x, d) != nil {
					t.Fatalf("entry for itself at %d", x)
				}
				continue
			}
			var want []int32
			for c := g.Off[x]; c < g.Off[x+1]; c++ {
				v := g.Head[c]
				if tb.Group[x] == tb.Group[d] {
					if tb.Group[v] == tb.Group[x] && tb.LocalDist(v, d) == tb.LocalDist(x, d)-1 {
						want = append(want, c)
					}
				} else if gd := tb.GatewayDist(x, tb.Group[d]); (gd == 1 && tb.Group[v] == tb.Group[d]) ||
					(gd > 1 && tb.Group[v] == tb.Group[x] && tb.GatewayDist(v, tb.Group[d]) == gd-1) {
					want = append(want, c)
				}
			}
			got := tb.Lookup(x, d)
			if len(got) == 0 || len(got) != len(want) {
				t.Fatalf("%d -> %d: entry %v, want %v", x, d, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%d -> %d: entry %v, want %v", x, d, got, want)
				}
			}
		}
	}
}

func TestBuildErrors(t *testing.T) {
	tb := build(t, topo.RSIConfig{Layer1: "full-5", SuperNodes: 2, LinksPerPair: 1})
	if _, err := Build(tb.G, []int{0, 1}); err == nil {
		t.Fatal("short group slice accepted")
	}
	bad := make([]int, tb.G.NumSwitches())
	bad[0] = 2 // super node 1 empty
	if _, err := Build(tb.G, bad); err == nil {
		t.Fatal("empty super node accepted")
	}
	bad[0] = -1
	if _, err := Build(tb.G, bad); err == nil {
		t.Fatal("negative group accepted")
	}
}
