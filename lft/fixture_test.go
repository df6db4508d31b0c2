package lft

import (
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// fixture is a small hand-built fabric for the golden files, independent
// of the generators: three switches in a ring (sw-a, sw-b, sw-c; LIDs 1-3,
// port 2 of sw-b uncabled), CA h1 with LMC 1 (LIDs 8-9) on sw-a, CA h2
// (LID 10) on sw-b, CA h3 (LID 11) and router rt1 (LID 12) on sw-c. LIDs
// 4-7 belong to nobody.
func fixture(t testing.TB) *fabric.Graph {
	t.Helper()
	b := fabric.NewBuilder()
	add := func(k fabric.NodeKind, guid uint64, nports int, desc string) fabric.NodeID {
		id, err := b.AddNode(k, guid, nports, desc)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	conn := func(a fabric.NodeID, pa uint8, c fabric.NodeID, pc uint8) {
		if err := b.Connect(fabric.PortRef{Node: a, Port: pa}, fabric.PortRef{Node: c, Port: pc}); err != nil {
			t.Fatal(err)
		}
	}
	sa := add(fabric.Switch, 0x0002c90000000001, 4, "sw-a")
	sb := add(fabric.Switch, 0x0002c90000000002, 4, "sw-b")
	sc := add(fabric.Switch, 0x0002c90000000003, 4, "sw-c")
	h1 := add(fabric.CA, 0x0002c90100000002, 1, "h1 HCA-1")
	h2 := add(fabric.CA, 0x0002c90100000004, 1, "h2 HCA-1")
	h3 := add(fabric.CA, 0x0002c90100000006, 1, "h3 HCA-1")
	rt := add(fabric.Router, 0x0002c90200000010, 1, "rt1")
	conn(sa, 3, sb, 4)
	conn(sb, 3, sc, 4)
	conn(sc, 3, sa, 4)
	conn(h1, 1, sa, 1)
	conn(h2, 1, sb, 1)
	conn(h3, 1, sc, 1)
	conn(rt, 1, sc, 2)
	for i, id := range []fabric.NodeID{sa, sb, sc} {
		b.Node(id).Enhanced = true
		b.Node(id).Ports[0].LID = uint16(i + 1)
	}
	for _, x := range []struct {
		id  fabric.NodeID
		lid uint16
		lmc uint8
	}{{h1, 8, 1}, {h2, 10, 0}, {h3, 11, 0}, {rt, 12, 0}} {
		p := &b.Node(x.id).Ports[1]
		p.GUID = b.Node(x.id).GUID + 1
		p.LID, p.LMC = x.lid, x.lmc
	}
	g, err := fabric.Compile(b.Fabric())
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// fixtureRouting routes the fixture along the ring (sw-a -> sw-b -> sw-c
// -> sw-a), with per-source SLs, one pair exception, an SL2VL table of its
// own on sw-b, a route to the unowned LID 5, and no route to LIDs 4, 6, 7.
func fixtureRouting(t testing.TB, g *fabric.Graph) *Routing {
	t.Helper()
	r := New(g, "fixture")
	r.NumVLs = 3
	// next switch along the ring leaves through port 3; terminals hang on
	// ports 1 (CAs) and 2 (router on sw-c).
	owner := map[int][2]int{ // LID -> (switch index, port on it)
		1: {0, 0}, 2: {1, 0}, 3: {2, 0},
		8: {0, 1}, 9: {0, 1}, 10: {1, 1}, 11: {2, 1}, 12: {2, 2},
	}
	for s := 0; s < 3; s++ {
		for lid, o := range owner {
			if o[0] == s {
				r.SetPort(int32(s), lid, uint8(o[1]))
			} else {
				r.SetPort(int32(s), lid, 3)
			}
		}
	}
	r.SetPort(0, 5, 3)
	for lid, sl := range map[int]uint8{1: 1, 2: 1, 3: 1, 8: 2, 9: 2, 10: 2, 11: 0, 12: 1} {
		r.SL.ByDest[lid] = sl
	}
	r.SL.EnableBySrc(3)
	row := r.SL.SrcRow(1)
	row[8], row[9], row[10] = 0, 0, 1
	r.SL.Pair = map[uint32]uint8{10<<16 | 12: 2}
	r.SL2VL.Default = [NumSLs]uint8{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0}
	r.SL2VL.Switch = make([]*PortSL2VL, 3)
	tab := NewPortSL2VL(4, r.SL2VL.Default)
	tab.Set(4, 3, 1, 2) // dateline-style: SL 1 from sw-a continues on VL 2
	tab.Set(4, 3, 2, 0)
	r.SL2VL.Switch[1] = tab
	return r
}

// perDestFixture is fixtureRouting with destination-only SLs.
func perDestFixture(t testing.TB, g *fabric.Graph) *Routing {
	r := fixtureRouting(t, g)
	r.SL.BySrc, r.SL.Pair = nil, nil
	return r
}
