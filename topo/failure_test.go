package topo

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// fiFabric builds switches 0..n-1 (GUID 0x1000+i) with hosts[i] CAs each
// (GUIDs from 0x9000 up, in switch order) and the given switch-to-switch
// cables, and assigns LIDs.
func fiFabric(t testing.TB, hosts []int, cables [][2]int) *fabric.Fabric {
	t.Helper()
	b := fabric.NewBuilder()
	n := len(hosts)
	next := make([]int, n)
	need := append([]int(nil), hosts...)
	for _, c := range cables {
		need[c[0]]++
		need[c[1]]++
	}
	radix := max(slices.Max(need), 1) + 8 // spare ports for tests that add cables
	for i := 0; i < n; i++ {
		if _, err := b.AddNode(fabric.Switch, 0x1000+uint64(i), radix, fmt.Sprintf("sw%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	port := func(s int) uint8 {
		next[s]++
		return uint8(next[s])
	}
	for _, c := range cables {
		a, z := fabric.NodeID(c[0]), fabric.NodeID(c[1])
		if err := b.Connect(fabric.PortRef{Node: a, Port: port(c[0])}, fabric.PortRef{Node: z, Port: port(c[1])}); err != nil {
			t.Fatal(err)
		}
	}
	guid := uint64(0x9000)
	for s, h := range hosts {
		for ; h > 0; h-- {
			guid += 2
			id, err := b.AddNode(fabric.CA, guid, 1, fmt.Sprintf("host%x", guid))
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Connect(fabric.PortRef{Node: id, Port: 1}, fabric.PortRef{Node: fabric.NodeID(s), Port: port(s)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	f := b.Fabric()
	if err := f.AssignLIDs(0); err != nil {
		t.Fatal(err)
	}
	return f
}

// fiTwoLevel: spines 0..spines-1, leaves after them with hosts each, every
// leaf cabled once to every spine.
func fiTwoLevel(t testing.TB, spines, leaves, hosts int) *fabric.Fabric {
	t.Helper()
	hs := make([]int, spines+leaves)
	var cables [][2]int
	for l := spines; l < spines+leaves; l++ {
		hs[l] = hosts
		for s := 0; s < spines; s++ {
			cables = append(cables, [2]int{s, l})
		}
	}
	return fiFabric(t, hs, cables)
}

// fiCAGroups returns, per CA GUID, the set of CA GUIDs in its component of
// f (fabric.Components; the fabrics here have single-port CAs only).
func fiCAGroups(f *fabric.Fabric) map[uint64]int {
	size := map[uint64]int{}
	for _, comp := range f.Components() {
		var cas []uint64
		for _, id := range comp {
			if f.Nodes[id].Kind == fabric.CA {
				cas = append(cas, f.Nodes[id].GUID)
			}
		}
		for _, g := range cas {
			size[g] = len(cas)
		}
	}
	return size
}

// fiCompOf maps every node GUID of f to its component index.
func fiCompOf(f *fabric.Fabric) map[uint64]int {
	m := map[uint64]int{}
	for i, comp := range f.Components() {
		for _, id := range comp {
			m[f.Nodes[id].GUID] = i
		}
	}
	return m
}

func fiLostGUIDs(orig *fabric.Fabric, fl Failure) []uint64 {
	var out []uint64
	for _, id := range fl.LostCAs.ToArray() {
		out = append(out, orig.Nodes[id].GUID)
	}
	slices.Sort(out)
	return out
}

func mustInject(t testing.TB, f *fabric.Fabric, spec FailureSpec) (*fabric.Fabric, []Failure) {
	t.Helper()
	out, fails, err := InjectFailures(f, spec)
	if err != nil {
		t.Fatalf("InjectFailures(%+v): %v", spec, err)
	}
	if err := out.Validate(); err != nil {
		t.Fatalf("result invalid: %v", err)
	}
	return out, fails
}

func TestFailuresRing(t *testing.T) {
	tp, err := Ring(6, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := tp.Fabric
	for seed := uint64(0); seed < 20; seed++ {
		out, fails := mustInject(t, f, FailureSpec{Links: 2, Seed: seed})
		if len(fails) != 2 || fails[0].Critical || !fails[1].Critical {
			t.Fatalf("seed %d: %+v, want non-critical then critical", seed, fails)
		}
		for _, fl := range fails {
			if fl.Kind != LinkFailure || fl.Switch != fabric.NoNode || fl.LostCAs == nil {
				t.Fatalf("seed %d: malformed link failure %+v", seed, fl)
			}
			if !f.Nodes[fl.Link.A.Node].Ports[fl.Link.A.Port].Cabled() || f.Port(fl.Link.A).Peer != fl.Link.B {
				t.Fatalf("seed %d: %v is not a cable of the original", seed, fl.Link)
			}
		}
		if !fails[0].LostCAs.IsEmpty() {
			t.Fatalf("seed %d: non-critical failure lost %v", seed, fails[0].LostCAs)
		}
		// The ring is cut into two arcs: the lost CAs are those of the arc
		// with fewer hosts, or with equal hosts the one without switch 0.
		if len(out.Links()) != len(f.Links())-2 || len(out.Nodes) != len(f.Nodes) {
			t.Fatalf("seed %d: %d cables, %d nodes", seed, len(out.Links()), len(out.Nodes))
		}
		comp := fiCompOf(out)
		hostsIn := map[int]int{}
		for i := range out.Nodes {
			if out.Nodes[i].Kind == fabric.CA {
				hostsIn[comp[out.Nodes[i].GUID]]++
			}
		}
		main := comp[f.Nodes[0].GUID]
		for c, n := range hostsIn {
			if n > hostsIn[main] {
				main = c
			}
		}
		var want []uint64
		for i := range out.Nodes {
			if n := &out.Nodes[i]; n.Kind == fabric.CA && comp[n.GUID] != main {
				want = append(want, n.GUID)
			}
		}
		slices.Sort(want)
		if got := fiLostGUIDs(f, fails[1]); !slices.Equal(got, want) || len(want) == 0 || len(want) > 3 {
			t.Fatalf("seed %d: lost %x, want %x", seed, got, want)
		}
	}
	// Fail-in-place: one cable may fail, the second has no non-critical pick.
	if _, fails := mustInject(t, f, FailureSpec{Links: 1, SkipCritical: true}); fails[0].Critical {
		t.Fatal("SkipCritical returned a critical failure")
	}
	if _, _, err := InjectFailures(f, FailureSpec{Links: 2, SkipCritical: true}); !errors.Is(err, ErrAllCritical) {
		t.Fatalf("two fail-in-place failures on a ring: %v, want ErrAllCritical", err)
	}
}

func TestFailuresTree(t *testing.T) {
	// A binary tree of 7 switches with one host each: every cable is
	// critical, alone or after others.
	cables := [][2]int{{0, 1}, {0, 2}, {1, 3}, {1, 4}, {2, 5}, {2, 6}}
	f := fiFabric(t, []int{1, 1, 1, 1, 1, 1, 1}, cables)
	seen := map[fabric.Link]bool{}
	for seed := uint64(0); seed < 60; seed++ {
		_, fails := mustInject(t, f, FailureSpec{Links: 1, Seed: seed})
		fl := fails[0]
		seen[fl.Link] = true
		if !fl.Critical {
			t.Fatalf("seed %d: cable %v not critical", seed, fl.Link)
		}
		// The lower end's subtree is cut off: 1 host below a leaf switch,
		// 3 below a middle switch (always the smaller side).
		lower := fl.Link.B.Node
		want := uint64(1)
		if lower == 1 || lower == 2 {
			want = 3
		}
		if got := fl.LostCAs.GetCardinality(); got != want {
			t.Fatalf("seed %d: cable %v lost %d CAs, want %d", seed, fl.Link, got, want)
		}
	}
	if len(seen) != len(cables) {
		t.Errorf("only %d of %d cables drawn in 60 seeds", len(seen), len(cables))
	}
	_, fails := mustInject(t, f, FailureSpec{Links: len(cables), Seed: 9})
	for i, fl := range fails {
		if !fl.Critical {
			t.Fatalf("failure %d of all cables not critical", i)
		}
	}
	if _, _, err := InjectFailures(f, FailureSpec{Links: 1, SkipCritical: true}); !errors.Is(err, ErrAllCritical) {
		t.Fatalf("fail-in-place on a tree: %v, want ErrAllCritical", err)
	}
}

func TestFailuresTwoLevelSwitches(t *testing.T) {
	f := fiTwoLevel(t, 2, 4, 2)
	var spine, leaf int
	for seed := uint64(0); seed < 40; seed++ {
		out, fails := mustInject(t, f, FailureSpec{Switches: 1, Seed: seed})
		fl := fails[0]
		if fl.Kind != SwitchFailure || fl.Link.A.Valid() || fl.Link.B.Valid() {
			t.Fatalf("seed %d: malformed switch failure %+v", seed, fl)
		}
		if out.Count(fabric.Switch) != 5 || out.Count(fabric.CA) != 8 {
			t.Fatalf("seed %d: %d switches %d CAs, want 5 and 8 (CAs stay)", seed, out.Count(fabric.Switch), out.Count(fabric.CA))
		}
		if _, ok := out.NodeByGUID(f.Nodes[fl.Switch].GUID); ok {
			t.Fatalf("seed %d: failed switch still in the fabric", seed)
		}
		if fl.Switch < 2 { // a spine: the other spine still joins all leaves
			spine++
			if fl.Critical || !fl.LostCAs.IsEmpty() {
				t.Fatalf("seed %d: spine failure %+v, want non-critical", seed, fl)
			}
			continue
		}
		leaf++
		if !fl.Critical || fl.LostCAs.GetCardinality() != 2 {
			t.Fatalf("seed %d: leaf failure critical=%v lost %v, want its 2 hosts", seed, fl.Critical, fl.LostCAs)
		}
		for _, id := range fl.LostCAs.ToArray() {
			n := f.Nodes[id]
			if f.Port(fabric.PortRef{Node: fabric.NodeID(id), Port: 1}).Peer.Node != fl.Switch {
				t.Fatalf("seed %d: lost CA %s is not on the failed leaf", seed, f.Name(fabric.NodeID(id)))
			}
			nid, ok := out.NodeByGUID(n.GUID)
			if !ok || out.Nodes[nid].Ports[1].Cabled() || out.Nodes[nid].Ports[1].LID != n.Ports[1].LID {
				t.Fatalf("seed %d: lost CA should stay, uncabled, with its LID", seed)
			}
		}
	}
	if spine == 0 || leaf == 0 {
		t.Fatalf("40 seeds drew %d spines and %d leaves", spine, leaf)
	}
	for seed := uint64(0); seed < 10; seed++ {
		_, fails := mustInject(t, f, FailureSpec{Switches: 1, Seed: seed, SkipCritical: true})
		if fails[0].Switch >= 2 || fails[0].Critical {
			t.Fatalf("seed %d: fail-in-place picked %+v, want a spine", seed, fails[0])
		}
		// Every single cable is non-critical (each leaf has two uplinks).
		_, fails = mustInject(t, f, FailureSpec{Links: 1, Seed: seed})
		if fails[0].Critical {
			t.Fatalf("seed %d: cable %v critical", seed, fails[0].Link)
		}
	}
	// With one spine gone the other is critical.
	if _, _, err := InjectFailures(f, FailureSpec{Switches: 2, SkipCritical: true}); !errors.Is(err, ErrAllCritical) {
		t.Fatalf("two fail-in-place switch failures: %v, want ErrAllCritical", err)
	}
}

func TestFailuresMultiPortCA(t *testing.T) {
	// Leaves 0 and 1 joined by one cable; h0 on leaf 0, h1 on leaf 1, and
	// d with one port on each. d does not forward: cutting the cable
	// separates h0 from h1, though Components still sees one piece.
	f := fiFabric(t, []int{1, 1}, [][2]int{{0, 1}})
	b := fabric.NewBuilder()
	for i := range f.Nodes {
		n := f.Nodes[i]
		id, err := b.AddNode(n.Kind, n.GUID, n.NumPorts(), n.Desc)
		if err != nil {
			t.Fatal(err)
		}
		b.Node(id).Ports = append([]fabric.Port(nil), n.Ports...)
	}
	d, err := b.AddNode(fabric.CA, 0x7000, 2, "dual")
	if err != nil {
		t.Fatal(err)
	}
	for p, sw := range []fabric.NodeID{0, 1} {
		if err := b.Connect(fabric.PortRef{Node: d, Port: uint8(p + 1)}, fabric.PortRef{Node: sw, Port: 10}); err != nil {
			t.Fatal(err)
		}
	}
	f = b.Fabric()
	if err := f.AssignLIDs(0); err != nil {
		t.Fatal(err)
	}
	h0, h1 := fabric.NodeID(2), fabric.NodeID(3)
	out, fails := mustInject(t, f, FailureSpec{Links: 1})
	if fl := fails[0]; !fl.Critical || !slices.Equal(fl.LostCAs.ToArray(), []uint32{uint32(h1)}) {
		t.Fatalf("cable failure: %+v lost %v, want critical, h1 lost (h0 and d stay with the main part)", fl, fl.LostCAs)
	}
	if len(out.Components()) != 1 {
		t.Fatal("expected the dual-homed CA to join the parts in Components")
	}
	for seed := uint64(0); seed < 10; seed++ {
		_, fails = mustInject(t, f, FailureSpec{Switches: 1, Seed: seed})
		fl := fails[0]
		other := map[fabric.NodeID]fabric.NodeID{0: h0, 1: h1}[fl.Switch]
		if !fl.Critical || !slices.Equal(fl.LostCAs.ToArray(), []uint32{uint32(other)}) {
			t.Fatalf("seed %d: switch %d failure lost %v, want only its single-homed host", seed, fl.Switch, fl.LostCAs)
		}
	}
}

func TestFailuresHostLinks(t *testing.T) {
	f := fiFabric(t, []int{3}, nil)
	if _, _, err := InjectFailures(f, FailureSpec{Links: 1}); !errors.Is(err, ErrFailureSpec) {
		t.Fatalf("host cables are no default candidates: %v", err)
	}
	out, fails := mustInject(t, f, FailureSpec{Links: 1, HostLinks: true, Seed: 4})
	fl := fails[0]
	host := fl.Link.B.Node
	if f.Nodes[host].Kind != fabric.CA || !fl.Critical || !slices.Equal(fl.LostCAs.ToArray(), []uint32{uint32(host)}) {
		t.Fatalf("host cable failure %+v lost %v, want the host", fl, fl.LostCAs)
	}
	if g := mustCompileTopo(t, out); len(g.Terms) != 2 {
		t.Fatalf("%d terminals after a host cable failed, want 2", len(g.Terms))
	}
	// A CA-CA cable: both ends lose each other and there is no main part.
	b := fabric.NewBuilder()
	x, _ := b.AddNode(fabric.CA, 0x10, 1, "x")
	y, _ := b.AddNode(fabric.CA, 0x12, 1, "y")
	if err := b.Connect(fabric.PortRef{Node: x, Port: 1}, fabric.PortRef{Node: y, Port: 1}); err != nil {
		t.Fatal(err)
	}
	_, fails = mustInject(t, b.Fabric(), FailureSpec{LinkFraction: 1, HostLinks: true})
	if !fails[0].Critical || fails[0].LostCAs.GetCardinality() != 2 {
		t.Fatalf("CA-CA cable failure %+v, want both CAs lost", fails[0])
	}
}

func mustCompileTopo(t *testing.T, f *fabric.Fabric) *fabric.Graph {
	t.Helper()
	g, err := fabric.Compile(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
