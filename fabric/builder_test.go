package fabric_test

import (
	"errors"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

func TestBuilderAddNode(t *testing.T) {
	b := fabric.NewBuilder()
	s := mustAdd(t, b, fabric.Switch, 0x10, 36, "sw")
	h := mustAdd(t, b, fabric.CA, 0x20, 2, "host")
	if s != 0 || h != 1 || b.Len() != 2 {
		t.Fatalf("ids %d %d, len %d; want 0 1 2", s, h, b.Len())
	}
	if got := b.Node(s).Ports[0].GUID; got != 0x10 {
		t.Errorf("switch port 0 GUID = %#x, want the node GUID", got)
	}
	if got := b.Node(h).Ports[0].GUID; got != 0 {
		t.Errorf("CA port 0 GUID = %#x, want 0", got)
	}
	for _, id := range []fabric.NodeID{s, h} {
		for p, pt := range b.Node(id).Ports {
			if pt.Cabled() || pt.Peer != fabric.NoPeer {
				t.Errorf("node %d port %d: peer %v, want NoPeer", id, p, pt.Peer)
			}
		}
	}
	if got := b.Node(s).NumPorts(); got != 36 {
		t.Errorf("NumPorts = %d, want 36", got)
	}
	if id, ok := b.Lookup(0x20); !ok || id != h {
		t.Errorf("Lookup(0x20) = %d %v", id, ok)
	}
	if _, ok := b.Lookup(0x99); ok {
		t.Error("Lookup of an unknown GUID succeeded")
	}

	bad := []struct {
		name   string
		kind   fabric.NodeKind
		guid   uint64
		nports int
		want   error
	}{
		{"duplicate GUID", fabric.CA, 0x10, 1, fabric.ErrDuplicateGUID},
		{"duplicate GUID other kind", fabric.Switch, 0x20, 8, fabric.ErrDuplicateGUID},
		{"GUID 0", fabric.CA, 0, 1, fabric.ErrGUID},
		{"no ports", fabric.CA, 0x30, 0, fabric.ErrPortRange},
		{"too many ports", fabric.Switch, 0x31, fabric.MaxPorts + 1, fabric.ErrPortRange},
		{"kind 0", 0, 0x32, 1, fabric.ErrKind},
		{"kind 9", 9, 0x33, 1, fabric.ErrKind},
	}
	for _, c := range bad {
		id, err := b.AddNode(c.kind, c.guid, c.nports, c.name)
		if !errors.Is(err, c.want) || id != fabric.NoNode {
			t.Errorf("%s: AddNode = %d, %v; want NoNode, %v", c.name, id, err, c.want)
		}
	}
	if b.Len() != 2 {
		t.Errorf("failed AddNode calls added nodes: len %d", b.Len())
	}
	if _, err := b.AddNode(fabric.Router, 0x40, fabric.MaxPorts, ""); err != nil {
		t.Errorf("router with MaxPorts ports: %v", err)
	}
}

func TestBuilderConnect(t *testing.T) {
	b := fabric.NewBuilder()
	s0 := mustAdd(t, b, fabric.Switch, 0x10, 4, "s0")
	s1 := mustAdd(t, b, fabric.Switch, 0x11, 4, "s1")
	h := mustAdd(t, b, fabric.CA, 0x20, 1, "h")

	mustConnect(t, b, s0, 1, s1, 1)
	// The same cable again, from either end, is a no-op.
	mustConnect(t, b, s0, 1, s1, 1)
	mustConnect(t, b, s1, 1, s0, 1)
	// A loopback cable between two ports of one switch is allowed.
	mustConnect(t, b, s0, 3, s0, 4)

	bad := []struct {
		name string
		a, c fabric.PortRef
		want error
	}{
		{"port 0", pr(s0, 0), pr(s1, 2), fabric.ErrPortRange},
		{"peer port 0", pr(s1, 2), pr(s0, 0), fabric.ErrPortRange},
		{"port beyond count", pr(s0, 2), pr(s1, 5), fabric.ErrPortRange},
		{"CA port 2", pr(h, 2), pr(s1, 2), fabric.ErrPortRange},
		{"no node", pr(7, 1), pr(s1, 2), fabric.ErrPortRange},
		{"negative node", pr(fabric.NoNode, 1), pr(s1, 2), fabric.ErrPortRange},
		{"first end cabled", pr(s0, 1), pr(s1, 2), fabric.ErrCabledTwice},
		{"second end cabled", pr(s1, 2), pr(s0, 1), fabric.ErrCabledTwice},
		{"to a loopback end", pr(h, 1), pr(s0, 4), fabric.ErrCabledTwice},
		{"self-cable", pr(s1, 3), pr(s1, 3), fabric.ErrCabledTwice},
	}
	for _, c := range bad {
		if err := b.Connect(c.a, c.c); !errors.Is(err, c.want) {
			t.Errorf("%s: Connect(%v, %v) = %v, want %v", c.name, c.a, c.c, err, c.want)
		}
	}
	// Failed calls leave no half-made cable behind.
	for _, r := range []fabric.PortRef{pr(s0, 2), pr(s1, 2), pr(s1, 3), pr(h, 1)} {
		if p := b.Node(r.Node).Ports[r.Port]; p.Cabled() {
			t.Errorf("%v cabled to %v after failed Connect calls", r, p.Peer)
		}
	}
	mustConnect(t, b, h, 1, s1, 2)
	f := b.Fabric()
	mustValid(t, f)
	want := []fabric.Link{
		{A: pr(s0, 1), B: pr(s1, 1)},
		{A: pr(s0, 3), B: pr(s0, 4)},
		{A: pr(s1, 2), B: pr(h, 1)},
	}
	got := f.Links()
	if len(got) != len(want) {
		t.Fatalf("Links = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Links[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestNodeByGUID(t *testing.T) {
	b := fabric.NewBuilder()
	mustAdd(t, b, fabric.Switch, 0x10, 4, "")
	mustAdd(t, b, fabric.CA, 0x20, 1, "")
	f := b.Fabric()
	if id, ok := f.NodeByGUID(0x20); !ok || id != 1 {
		t.Fatalf("NodeByGUID(0x20) = %d %v", id, ok)
	}
	if _, ok := f.NodeByGUID(0x30); ok {
		t.Fatal("unknown GUID found")
	}
	// Nodes appended by hand are found.
	f.Nodes = append(f.Nodes, fabric.Node{Kind: fabric.CA, GUID: 0x30, Ports: make([]fabric.Port, 2)})
	if id, ok := f.NodeByGUID(0x30); !ok || id != 2 {
		t.Fatalf("appended node: NodeByGUID(0x30) = %d %v", id, ok)
	}
	// A GUID changed in place is not found under its old value.
	f.Nodes[1].GUID = 0x21
	if id, ok := f.NodeByGUID(0x20); ok {
		t.Fatalf("stale GUID 0x20 still found at %d", id)
	}
	if id, ok := f.NodeByGUID(0x21); !ok || id != 1 {
		t.Fatalf("NodeByGUID(0x21) = %d %v", id, ok)
	}
	// A clone has its own index.
	g := f.Clone()
	g.Nodes = g.Nodes[:1]
	if _, ok := g.NodeByGUID(0x21); ok {
		t.Fatal("clone finds a node it no longer has")
	}
	if id, ok := f.NodeByGUID(0x21); !ok || id != 1 {
		t.Fatalf("original after clone: NodeByGUID(0x21) = %d %v", id, ok)
	}
	// With a duplicate GUID (invalid) the first node wins.
	f.Nodes[2].GUID = 0x10
	if id, ok := f.NodeByGUID(0x10); !ok || id != 0 {
		t.Fatalf("duplicate: NodeByGUID(0x10) = %d %v, want 0", id, ok)
	}
}

func TestCloneIsDeep(t *testing.T) {
	b := fabric.NewBuilder()
	s := mustAdd(t, b, fabric.Switch, 0x10, 4, "s")
	h := mustAdd(t, b, fabric.CA, 0x20, 1, "h")
	mustConnect(t, b, s, 1, h, 1)
	f := b.Fabric()
	f.Header = []string{"x"}
	f.Chassis = []fabric.Chassis{{Num: 1}}
	g := f.Clone()
	g.Nodes[s].Ports[1].Peer = fabric.NoPeer
	g.Nodes[h].Desc = "changed"
	g.Header[0] = "y"
	g.Chassis[0].Num = 2
	if !f.Nodes[s].Ports[1].Cabled() || f.Nodes[h].Desc != "h" || f.Header[0] != "x" || f.Chassis[0].Num != 1 {
		t.Fatal("Clone shares memory with the original")
	}
}

func TestSortedByGUIDAndCount(t *testing.T) {
	b := fabric.NewBuilder()
	mustAdd(t, b, fabric.CA, 0x05, 1, "")
	mustAdd(t, b, fabric.Switch, 0x30, 4, "")
	mustAdd(t, b, fabric.Router, 0x01, 1, "")
	mustAdd(t, b, fabric.Switch, 0x20, 4, "")
	f := b.Fabric()
	got := f.SortedByGUID()
	want := []fabric.NodeID{3, 1, 0, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("SortedByGUID = %v, want %v", got, want)
		}
	}
	if f.Count(fabric.Switch) != 2 || f.Count(fabric.CA) != 1 || f.Count(fabric.Router) != 1 {
		t.Fatal("Count wrong")
	}
	if got := f.Name(0); got != "H-0000000000000005" {
		t.Errorf("Name = %q", got)
	}
}
