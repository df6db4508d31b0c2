package fabric_test

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
	"github.com/nuesm/nuesm/topo"
)

// TestWithin: a fabric less a host's cable or a switch-to-switch cable
// is within the whole one and not the other way round; a host whose LID
// changed is not within it.
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
	if !whole.Within(whole) {
		t.Error("a fabric is not within itself")
	}
	for name, g := range map[string]*fabric.Graph{"host cable": cut(host), "switch cable": cut(inter)} {
		if !g.Within(whole) {
			t.Errorf("the fabric less a %s is not within the whole one", name)
		}
		if whole.Within(g) {
			t.Errorf("the whole fabric is within the one less a %s", name)
		}
	}
	f := tp.Fabric.Clone()
	ca := host.A
	if f.Nodes[ca.Node].Kind == fabric.Switch {
		ca = host.B
	}
	f.Port(ca).LID += 100
	if compile(f).Within(whole) {
		t.Error("a host with another LID is within the fabric")
	}
}
