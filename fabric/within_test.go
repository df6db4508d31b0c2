package fabric_test

import (
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// TestWithin: a fabric less a host's cable or a switch-to-switch cable
// is within the whole one and not the other way round, and not the same;
// its switches and channels match the whole one's (MatchTo); a host with another description is the same fabric; a host whose LID
// or a switch whose LMC changed is neither within it nor the same.
func TestWithin(t *testing.T) {
	tp, err := topo.Torus([]int{3, 3}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	compile := func(f *fabric.Fabric) *fabric.Graph {
		t.Helper()
		g, err := fabric.Compile(f)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	whole := compile(tp.Fabric)
	var host, inter fabric.Link
	for _, l := range tp.Fabric.Links() {
		a, b := tp.Fabric.Nodes[l.A.Node].Kind, tp.Fabric.Nodes[l.B.Node].Kind
		switch {
		case a == fabric.Switch && b == fabric.Switch:
			inter = l
		case a != b:
			host = l
		}
	}
	cut := func(l fabric.Link) *fabric.Graph {
		f := tp.Fabric.Clone()
		f.Port(l.A).Peer, f.Port(l.B).Peer = fabric.NoPeer, fabric.NoPeer
		return compile(f)
	}
	if !whole.Within(whole) || !whole.Same(whole) {
		t.Error("a fabric is not within itself, or not the same as itself")
	}
	for name, g := range map[string]*fabric.Graph{"host cable": cut(host), "switch cable": cut(inter)} {
		if !g.Within(whole) {
			t.Errorf("the fabric less a %s is not within the whole one", name)
		}
		if whole.Within(g) {
			t.Errorf("the whole fabric is within the one less a %s", name)
		}
		if g.Same(whole) || whole.Same(g) {
			t.Errorf("the fabric less a %s is the same as the whole one", name)
		}
		sw, ch, ok := g.MatchTo(whole)
		if !ok {
			t.Fatalf("the fabric less a %s does not match the whole one", name)
		}
		for c, c0 := range ch {
			tail, tail0 := g.F.Nodes[g.Switches[g.Tail[c]]].GUID, whole.F.Nodes[whole.Switches[whole.Tail[c0]]].GUID
			if sw[g.Tail[c]] != whole.Tail[c0] || sw[g.Head[c]] != whole.Head[c0] || tail != tail0 || g.OutPort[c] != whole.OutPort[c0] {
				t.Errorf("less a %s: channel %s matched to %s", name, g.ChannelName(int32(c)), whole.ChannelName(c0))
			}
		}
		if _, _, ok := whole.MatchTo(g); ok == (name == "switch cable") {
			t.Errorf("whole onto the fabric less a %s: matched %v", name, ok)
		}
	}
	f := tp.Fabric.Clone()
	ca := host.A
	if f.Nodes[ca.Node].Kind == fabric.Switch {
		ca = host.B
	}
	f.Nodes[ca.Node].Desc += " renamed"
	if !compile(f).Same(whole) {
		t.Error("a host with another description makes another fabric")
	}
	// A switch on a LID of its own (1000, 1001 free) with LMC 0, then 1.
	moved := tp.Fabric.Clone()
	sw := slices.IndexFunc(moved.Nodes, func(n fabric.Node) bool { return n.Kind == fabric.Switch })
	moved.Nodes[sw].Ports[0].LID = 1000
	lmc := moved.Clone()
	lmc.Nodes[sw].Ports[0].LMC = 1
	if g, g0 := compile(lmc), compile(moved); g.Within(g0) || g.Same(g0) || !g0.Same(g0) {
		t.Error("a switch with another LMC is within the fabric, or the same")
	}
	f.Port(ca).LID += 100
	if compile(f).Within(whole) || compile(f).Same(whole) {
		t.Error("a host with another LID is within the fabric, or the same")
	}
}
