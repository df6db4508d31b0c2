package fabric_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// lidsByGUID maps (node GUID, port) to (LID, LMC) for every endpoint.
func lidsByGUID(f *fabric.Fabric) map[[2]uint64][2]int {
	m := map[[2]uint64][2]int{}
	for _, r := range f.Endpoints() {
		p := f.Port(r)
		m[[2]uint64{f.Nodes[r.Node].GUID, uint64(r.Port)}] = [2]int{int(p.LID), int(p.LMC)}
	}
	return m
}

// starFabric builds one switch with CAs on ports 1..n, nodes added in the
// given order (a permutation of -1 = switch and 0..n-1 = CA i). CA i has
// node GUID 0x100+2i and port GUID 0x101+2i; the switch has GUID 0x50.
func starFabric(tb testing.TB, order []int) *fabric.Fabric {
	tb.Helper()
	b := fabric.NewBuilder()
	ids := map[int]fabric.NodeID{}
	for _, i := range order {
		if i < 0 {
			ids[i] = mustAdd(tb, b, fabric.Switch, 0x50, 16, "sw")
			continue
		}
		ids[i] = mustAdd(tb, b, fabric.CA, 0x100+2*uint64(i), 1, "")
		b.Node(ids[i]).Ports[1].GUID = 0x101 + 2*uint64(i)
	}
	for i := range len(order) - 1 {
		mustConnect(tb, b, ids[i], 1, ids[-1], uint8(i+1))
	}
	return b.Fabric()
}

func TestAssignLIDsDeterministic(t *testing.T) {
	const n = 10
	var want map[[2]uint64][2]int
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 20; trial++ {
		order := []int{-1}
		for i := 0; i < n; i++ {
			order = append(order, i)
		}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		f := starFabric(t, order)
		if err := f.AssignLIDs(0); err != nil {
			t.Fatal(err)
		}
		mustValid(t, f)
		got := lidsByGUID(f)
		if want == nil {
			want = got
			// Port GUID order: the switch (0x50) first, then CA 0, 1, ….
			if got[[2]uint64{0x50, 0}][0] != 1 {
				t.Fatalf("switch LID %v, want 1", got[[2]uint64{0x50, 0}])
			}
			for i := 0; i < n; i++ {
				if l := got[[2]uint64{0x100 + 2*uint64(i), 1}]; l != [2]int{i + 2, 0} {
					t.Fatalf("CA %d: LID/LMC %v, want %d/0", i, l, i+2)
				}
			}
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("order %v: %#x[%d] LID %v, want %v", order, k[0], k[1], got[k], v)
			}
		}
	}
}

func TestAssignLIDsLMC(t *testing.T) {
	b := fabric.NewBuilder()
	base := mustAdd(t, b, fabric.Switch, 0x10, 8, "base")
	enh := mustAdd(t, b, fabric.Switch, 0x11, 8, "enhanced")
	enh2 := mustAdd(t, b, fabric.Switch, 0x12, 8, "enhanced, own LMC")
	b.Node(enh).Enhanced = true
	b.Node(enh2).Enhanced = true
	b.Node(base).Ports[0].LMC = 3 // a base switch port 0 cannot have an LMC
	b.Node(enh2).Ports[0].LMC = 2
	mustConnect(t, b, base, 1, enh, 1)
	mustConnect(t, b, enh, 2, enh2, 1)
	h0 := mustAdd(t, b, fabric.CA, 0x20, 2, "") // port 1 own LMC 3, port 2 the default
	h1 := mustAdd(t, b, fabric.CA, 0x21, 1, "")
	h2 := mustAdd(t, b, fabric.CA, 0x22, 1, "") // stays uncabled: no LID
	b.Node(h0).Ports[1].LMC = 3
	b.Node(h2).Ports[1].LMC = 2
	mustConnect(t, b, h0, 1, base, 2)
	mustConnect(t, b, h0, 2, enh, 3)
	mustConnect(t, b, h1, 1, enh2, 2)
	f := b.Fabric()
	if err := f.AssignLIDs(1); err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	want := []struct {
		r        fabric.PortRef
		lid, lmc int
	}{
		// Served in port GUID order; CA ports have GUID 0 so they come
		// first, by node GUID then port.
		{pr(h0, 1), 8, 3},
		{pr(h0, 2), 2, 1},
		{pr(h1, 1), 4, 1},
		{pr(base, 0), 1, 0},
		{pr(enh, 0), 6, 1},
		{pr(enh2, 0), 16, 2}, // 4, 8 and 12 are taken
		{pr(h2, 1), 0, 2},
	}
	for _, w := range want {
		p := f.Port(w.r)
		if int(p.LID) != w.lid || int(p.LMC) != w.lmc {
			t.Errorf("%s: LID %d LMC %d, want %d %d", f.PortName(w.r), p.LID, p.LMC, w.lid, w.lmc)
		}
	}
	if got := f.MaxLID(); got != 19 {
		t.Errorf("MaxLID = %d, want 19", got)
	}
}

func TestAssignLIDsKeepsExistingAndFillsGaps(t *testing.T) {
	f := starFabric(t, []int{-1, 0, 1, 2, 3, 4, 5})
	f.Nodes[0].Ports[0].LID = 2      // switch
	f.Nodes[2].Ports[1].LID = 4      // CA 1
	f.Nodes[4].Ports[1].LID = 0xBFFF // CA 3
	if err := f.AssignLIDs(0); err != nil {
		t.Fatal(err)
	}
	mustValid(t, f)
	want := []uint16{2, 1, 4, 3, 0xBFFF, 5, 6}
	for i, w := range want {
		r := fabric.PortRef{Node: fabric.NodeID(i), Port: 1}
		if i == 0 {
			r.Port = 0
		}
		if got := f.Port(r).LID; got != w {
			t.Errorf("node %d: LID %d, want %d", i, got, w)
		}
	}
	// A second call changes nothing.
	before := lidsByGUID(f)
	if err := f.AssignLIDs(3); err != nil {
		t.Fatal(err)
	}
	after := lidsByGUID(f)
	for k, v := range before {
		if after[k] != v {
			t.Errorf("second AssignLIDs moved %v: %v -> %v", k, v, after[k])
		}
	}
}

func TestAssignLIDsRandomNeverOverlaps(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for trial := 0; trial < 200; trial++ {
		f := randomFabric(t, r, randOpts{maxSwitches: 12, edgeProb: 0.3, maxHosts: 4, extras: true})
		// Clear some LIDs, give some ports random LMCs, and assign again.
		for _, ref := range f.Endpoints() {
			p := f.Port(ref)
			switch r.IntN(3) {
			case 0:
				p.LID = 0
			case 1:
				p.LID, p.LMC = 0, uint8(r.IntN(8))
			}
		}
		if err := f.AssignLIDs(uint8(r.IntN(8))); err != nil {
			t.Fatal(err)
		}
		mustValid(t, f)
		for _, ref := range f.Endpoints() {
			if f.Port(ref).LID == 0 {
				t.Fatalf("trial %d: %s has no LID", trial, f.PortName(ref))
			}
		}
	}
}

// caPairs builds n pairs of directly cabled CAs, every port with the given
// LMC and no LID: 2n endpoints needing 2^lmc LIDs each.
func caPairs(tb testing.TB, b *fabric.Builder, n int, lmc uint8) {
	tb.Helper()
	for i := 0; i < n; i++ {
		x := mustAdd(tb, b, fabric.CA, 0x1000+4*uint64(i), 1, "")
		y := mustAdd(tb, b, fabric.CA, 0x1002+4*uint64(i), 1, "")
		b.Node(x).Ports[1].LMC = lmc
		b.Node(y).Ports[1].LMC = lmc
		mustConnect(tb, b, x, 1, y, 1)
	}
}

func TestAssignLIDsExhausted(t *testing.T) {
	// 0x0080..0xBFFF holds exactly 383 aligned blocks of 128 LIDs; the
	// switch takes LID 1 below them.
	b := fabric.NewBuilder()
	sw := mustAdd(t, b, fabric.Switch, 0x10, 4, "sw")
	h := mustAdd(t, b, fabric.CA, 0x20, 1, "")
	mustConnect(t, b, h, 1, sw, 1)
	b.Node(h).Ports[1].LMC = 7
	caPairs(t, b, 191, 7)
	f := b.Fabric()
	if err := f.AssignLIDs(0); err != nil {
		t.Fatalf("383 blocks of 128: %v", err)
	}
	mustValid(t, f)
	if f.MaxLID() != fabric.MaxUnicastLID || f.Nodes[sw].Ports[0].LID != 1 {
		t.Fatalf("MaxLID %d, switch LID %d", f.MaxLID(), f.Nodes[sw].Ports[0].LID)
	}

	// One more block does not fit, and a failed call changes nothing.
	b = fabric.NewBuilder()
	caPairs(t, b, 192, 7)
	f = b.Fabric()
	err := f.AssignLIDs(0)
	if !errors.Is(err, fabric.ErrLIDRange) {
		t.Fatalf("384 blocks of 128: AssignLIDs = %v, want ErrLIDRange", err)
	}
	for _, r := range f.Endpoints() {
		if p := f.Port(r); p.LID != 0 || p.LMC != 7 {
			t.Fatalf("failed AssignLIDs changed %s: LID %d LMC %d", f.PortName(r), p.LID, p.LMC)
		}
	}

	// The lmc argument alone can exhaust the space too.
	b = fabric.NewBuilder()
	caPairs(t, b, 192, 0)
	f = b.Fabric()
	if err := f.AssignLIDs(7); !errors.Is(err, fabric.ErrLIDRange) {
		t.Fatalf("lmc argument 7: AssignLIDs = %v, want ErrLIDRange", err)
	}
	if err := f.AssignLIDs(6); err != nil {
		t.Fatalf("lmc argument 6: %v", err)
	}
	mustValid(t, f)
}

func TestAssignLIDsErrors(t *testing.T) {
	f := starFabric(t, []int{-1, 0, 1})
	if err := f.AssignLIDs(8); !errors.Is(err, fabric.ErrLMC) {
		t.Errorf("lmc 8: %v, want ErrLMC", err)
	}
	f.Nodes[1].Ports[1].LMC = 9 // unassigned port with a bad LMC
	if err := f.AssignLIDs(0); !errors.Is(err, fabric.ErrLMC) {
		t.Errorf("port LMC 9: %v, want ErrLMC", err)
	}
	f.Nodes[1].Ports[1].LMC = 0
	f.Nodes[1].Ports[1].LID = 0xC000
	if err := f.AssignLIDs(0); !errors.Is(err, fabric.ErrLIDRange) {
		t.Errorf("LID 0xC000: %v, want ErrLIDRange", err)
	}
	f.Nodes[1].Ports[1].LID, f.Nodes[1].Ports[1].LMC = 0xBFFE, 2
	if err := f.AssignLIDs(0); !errors.Is(err, fabric.ErrLIDRange) {
		t.Errorf("LID 0xBFFE LMC 2: %v, want ErrLIDRange", err)
	}
	for _, r := range []fabric.PortRef{pr(0, 0), pr(2, 1)} {
		if f.Port(r).LID != 0 {
			t.Errorf("failed AssignLIDs gave %s a LID", f.PortName(r))
		}
	}
}
