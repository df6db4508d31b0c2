package rsi

import (
	"errors"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// buildDOR generates an RSI network and both its tables: every minimal
// port, and dimension order.
func buildDOR(t *testing.T, c topo.RSIConfig) (anyMin, dor *Tables) {
	t.Helper()
	anyMin = build(t, c)
	dims, err := topo.RSILayer1Dims(c.Layer1)
	if err != nil {
		t.Fatal(err)
	}
	if dor, err = BuildWith(anyMin.G, anyMin.Group, BuildOptions{Local: DimOrder, Dims: dims}); err != nil {
		t.Fatal(err)
	}
	if dor.Local != DimOrder || anyMin.Local != AnyMinimal {
		t.Fatalf("Local: %v, %v", anyMin.Local, dor.Local)
	}
	return anyMin, dor
}

// TestDimOrderEntries: dimension order keeps one port per entry, always
// one of the minimal ports, so hop counts do not change (BR 3.717 and HR
// 4.661 on 8 super nodes, as TestTwoLevelHops); the port corrects the
// lowest differing dimension (BR: member i = (i mod 4, i div 4), n0 -> n5
// goes to n1 first; HR: n0 -> n15 to n1, n6 -> n9 to n7), and T2 leads to
// the nearest gateway's cable.
func TestDimOrderEntries(t *testing.T) {
	for _, c := range []struct {
		layer1   string
		avg      float64
		from, to int32
		first    int32
	}{{"BR", 3.717, 0, 5, 1}, {"HR", 4.661, 0, 15, 1}, {"HR", 4.661, 6, 9, 7}} {
		anyMin, dor := buildDOR(t, topo.RSIConfig{Layer1: c.layer1, SuperNodes: 8, LinksPerPair: 1})
		g := dor.G
		for x := int32(0); int(x) < g.NumSwitches(); x++ {
			for d := int32(0); int(d) < g.NumSwitches(); d++ {
				e, all := dor.Lookup(x, d), anyMin.Lookup(x, d)
				if x == d {
					continue
				}
				if len(e) != 1 || !contains(all, e[0]) {
					t.Fatalf("%s: entry %s -> %s is %v, want one of %v", c.layer1, g.SwitchName(x), g.SwitchName(d), e, all)
				}
			}
		}
		h := dor.Hops()
		if d := h.AvgMin - c.avg; d > 5e-4 || d < -5e-4 || h.AvgMax != h.AvgMin {
			t.Fatalf("%s: hops %+v, want %.3f on every path", c.layer1, h, c.avg)
		}
		for _, s := range dor.Sizes(nil) {
			if s.Multipath != 0 || s.Ports != s.Hier() {
				t.Fatalf("%s: node %d keeps %d multipath entries, %d ports for %d entries", c.layer1, s.Node, s.Multipath, s.Ports, s.Hier())
			}
		}
		e := dor.T1(c.from, c.to)
		if got := g.Head[e[0]]; got != c.first {
			t.Fatalf("%s: n%d -> n%d leaves toward %s, want n%d", c.layer1, c.from, c.to, g.SwitchName(got), c.first)
		}
	}
}

func contains(e Entry, c int32) bool {
	for _, v := range e {
		if v == c {
			return true
		}
	}
	return false
}

// TestDimOrderGateway: on BR-3 with 16 links per pair every node owns a
// cable to each other super node, so every T2 entry is the node's own
// cable; with one link the entry of a non-gateway node is a layer-1 hop.
func TestDimOrderGateway(t *testing.T) {
	_, dor := buildDOR(t, topo.RSIConfig{Layer1: "BR", SuperNodes: 3, LinksPerPair: 16})
	g := dor.G
	for x := int32(0); int(x) < g.NumSwitches(); x++ {
		for s := 0; s < dor.NumSuperNodes(); s++ {
			if s == dor.Group[x] {
				continue
			}
			if e := dor.T2(x, s); len(e) != 1 || dor.Group[g.Head[e[0]]] != s {
				t.Fatalf("%s toward super node %d: %v, want its own cable", g.SwitchName(x), s, e)
			}
		}
	}
}

func TestDimOrderErrors(t *testing.T) {
	tp, err := topo.RSI("SR", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	g, err := fabric.Compile(tp.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range []BuildOptions{
		{Local: DimOrder},
		{Local: DimOrder, Dims: []int{1, 18}},
		{Local: DimOrder, Dims: []int{3, 6}}, // 18 nodes, but not a Hamming graph
		{Local: DimOrder, Dims: []int{4, 4}}, // 16 nodes for 18
		{Local: AnyMinimal, Dims: []int{18}},
		{Local: 7},
	} {
		if _, err := BuildWith(g, tp.Group, o); !errors.Is(err, ErrGroups) {
			t.Fatalf("options %d: %v, want ErrGroups", i, err)
		}
	}
	if _, err := topo.RSILayer1Dims("SR"); err == nil {
		t.Fatal("slimfly has dimensions")
	}
	if _, err := ParseLocal("adaptive"); err == nil {
		t.Fatal("bad local routing accepted")
	}
	if l, err := ParseLocal("DOR"); err != nil || l != DimOrder || l.String() != "dor" {
		t.Fatalf("ParseLocal(DOR) = %v, %v", l, err)
	}
}
