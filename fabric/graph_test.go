package fabric_test

import (
	"cmp"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nuesm/nuesm/fabric"
)

// Node ids of graphFabric.
const (
	gS0 fabric.NodeID = iota // switch index 0
	gS1                      // switch index 1
	gH0                      // CA on s0[4], LMC 2
	gS2                      // switch index 2
	gH1                      // CA on s2[4]
	gR0                      // router on s1[4]
	gH2                      // CA with two ports: s0[5] and s2[5]
	gC0                      // CA cabled to c1
	gC1                      // CA cabled to c0
)

// graphFabric: s0=s1 two parallel cables, s1-s2, s2-s0, a loopback on s2,
// CAs, a router and a directly cabled CA pair; hand-set LIDs with gaps at
// 7 and 14..19.
func graphFabric(tb testing.TB, lids bool) *fabric.Fabric {
	tb.Helper()
	b := fabric.NewBuilder()
	s0 := mustAdd(tb, b, fabric.Switch, 0x10, 8, "s0")
	s1 := mustAdd(tb, b, fabric.Switch, 0x11, 8, "s1")
	h0 := mustAdd(tb, b, fabric.CA, 0x20, 1, "h0")
	s2 := mustAdd(tb, b, fabric.Switch, 0x12, 8, "s2")
	h1 := mustAdd(tb, b, fabric.CA, 0x21, 1, "h1")
	r0 := mustAdd(tb, b, fabric.Router, 0x40, 1, "r0")
	h2 := mustAdd(tb, b, fabric.CA, 0x22, 2, "h2")
	c0 := mustAdd(tb, b, fabric.CA, 0x30, 1, "c0")
	c1 := mustAdd(tb, b, fabric.CA, 0x31, 1, "c1")
	mustConnect(tb, b, s0, 1, s1, 1)
	mustConnect(tb, b, s1, 2, s0, 2)
	mustConnect(tb, b, s1, 3, s2, 1)
	mustConnect(tb, b, s2, 2, s2, 3)
	mustConnect(tb, b, s2, 6, s0, 6)
	mustConnect(tb, b, h0, 1, s0, 4)
	mustConnect(tb, b, h1, 1, s2, 4)
	mustConnect(tb, b, r0, 1, s1, 4)
	mustConnect(tb, b, h2, 1, s0, 5)
	mustConnect(tb, b, h2, 2, s2, 5)
	mustConnect(tb, b, c0, 1, c1, 1)
	f := b.Fabric()
	if lids {
		set := func(r fabric.PortRef, lid uint16, lmc uint8) {
			p := f.Port(r)
			p.LID, p.LMC = lid, lmc
		}
		f.Nodes[s0].Enhanced = true
		set(pr(s0, 0), 2, 1)
		set(pr(s1, 0), 1, 0)
		set(pr(s2, 0), 4, 0)
		set(pr(h0, 1), 8, 2)
		set(pr(h1, 1), 5, 0)
		set(pr(r0, 1), 6, 0)
		set(pr(h2, 1), 12, 0)
		set(pr(h2, 2), 13, 0)
		set(pr(c0, 1), 20, 0)
		set(pr(c1, 1), 21, 0)
	}
	mustValid(tb, f)
	return f
}

func TestCompileHandBuilt(t *testing.T) {
	f := graphFabric(t, true)
	g := mustCompile(t, f)
	if !slices.Equal(g.Switches, []fabric.NodeID{gS0, gS1, gS2}) {
		t.Fatalf("Switches = %v", g.Switches)
	}
	if !slices.Equal(g.SwitchOf, []int32{0, 1, -1, 2, -1, -1, -1, -1, -1}) {
		t.Fatalf("SwitchOf = %v", g.SwitchOf)
	}
	if g.NumSwitches() != 3 || g.NumChannels() != 8 || g.Loopbacks != 1 {
		t.Fatalf("switches %d channels %d loopbacks %d, want 3 8 1", g.NumSwitches(), g.NumChannels(), g.Loopbacks)
	}
	if !slices.Equal(g.Off, []int32{0, 3, 6, 8}) {
		t.Fatalf("Off = %v", g.Off)
	}
	// Channel c: tail, out port, head, in port, reverse.
	want := [][5]int32{
		{0, 1, 1, 1, 3}, {0, 2, 1, 2, 4}, {0, 6, 2, 6, 7},
		{1, 1, 0, 1, 0}, {1, 2, 0, 2, 1}, {1, 3, 2, 1, 6},
		{2, 1, 1, 3, 5}, {2, 6, 0, 6, 2},
	}
	for c, w := range want {
		got := [5]int32{g.Tail[c], int32(g.OutPort[c]), g.Head[c], int32(g.InPort[c]), g.Rev[c]}
		if got != w {
			t.Errorf("channel %d = %v, want %v", c, got, w)
		}
	}
	if g.Degree(0) != 3 || g.Degree(1) != 3 || g.Degree(2) != 2 {
		t.Errorf("degrees %d %d %d", g.Degree(0), g.Degree(1), g.Degree(2))
	}
	// ChannelAt: inter-switch ports only; CA ports, loopback ports, port 0,
	// uncabled ports and ports beyond the count give -1.
	at := []struct {
		s    int32
		p    uint8
		want int32
	}{
		{0, 0, -1}, {0, 1, 0}, {0, 2, 1}, {0, 3, -1}, {0, 4, -1}, {0, 5, -1}, {0, 6, 2}, {0, 8, -1}, {0, 9, -1}, {0, 255, -1},
		{1, 3, 5}, {1, 4, -1},
		{2, 1, 6}, {2, 2, -1}, {2, 3, -1}, {2, 6, 7}, {2, 9, -1}, {2, 255, -1},
	}
	for _, a := range at {
		if got := g.ChannelAt(a.s, a.p); got != a.want {
			t.Errorf("ChannelAt(%d, %d) = %d, want %d", a.s, a.p, got, a.want)
		}
	}
	if got := g.ChannelName(5); got != `"s1"[3] -> "s2"[1]` {
		t.Errorf("ChannelName(5) = %s", got)
	}

	wantTerms := []fabric.Terminal{
		{Node: gH0, Port: 1, LID: 8, LMC: 2, Switch: 0, SwitchPort: 4},
		{Node: gH1, Port: 1, LID: 5, Switch: 2, SwitchPort: 4},
		{Node: gH2, Port: 1, LID: 12, Switch: 0, SwitchPort: 5},
		{Node: gH2, Port: 2, LID: 13, Switch: 2, SwitchPort: 5},
		{Node: gC0, Port: 1, LID: 20, Switch: -1},
		{Node: gC1, Port: 1, LID: 21, Switch: -1},
		{Node: gR0, Port: 1, LID: 6, Switch: 1, SwitchPort: 4}, // GUID 0x40: last, though listed before h2
	}
	if !slices.Equal(g.Terms, wantTerms) {
		t.Fatalf("Terms = %+v\nwant %+v", g.Terms, wantTerms)
	}
	for s, w := range [][]int32{{0, 2}, {6}, {1, 3}} {
		if got := g.TermsOf(int32(s)); !slices.Equal(got, w) {
			t.Errorf("TermsOf(%d) = %v, want %v", s, got, w)
		}
	}

	if g.MaxLID() != 21 || g.SwitchLID(0) != 2 || g.SwitchLID(2) != 4 {
		t.Errorf("MaxLID %d, switch LIDs %d %d", g.MaxLID(), g.SwitchLID(0), g.SwitchLID(2))
	}
	owners := map[int][2]int32{
		1: {1, -1}, 2: {0, -1}, 3: {0, -1}, 4: {2, -1},
		5: {2, 1}, 6: {1, 6},
		8: {0, 0}, 9: {0, 0}, 10: {0, 0}, 11: {0, 0},
		12: {0, 2}, 13: {2, 3},
		20: {-1, 4}, 21: {-1, 5},
	}
	for lid := -1; lid <= 0xC000; lid++ {
		sw, term := g.Owner(lid)
		w, ok := owners[lid]
		if !ok {
			w = [2]int32{-1, -1}
		}
		if [2]int32{sw, term} != w {
			t.Errorf("Owner(%d) = %d %d, want %v", lid, sw, term, w)
		}
	}
	if g.SwitchName(2) != "s2" {
		t.Errorf("SwitchName(2) = %q", g.SwitchName(2))
	}
}

func TestCompileWithoutLIDs(t *testing.T) {
	g := mustCompile(t, graphFabric(t, false))
	if g.MaxLID() != 0 {
		t.Errorf("MaxLID = %d, want 0", g.MaxLID())
	}
	for lid := 0; lid < 4; lid++ {
		if sw, term := g.Owner(lid); sw != -1 || term != -1 {
			t.Errorf("Owner(%d) = %d %d without LIDs", lid, sw, term)
		}
	}
	if len(g.Terms) != 7 || g.NumChannels() != 8 {
		t.Errorf("terms %d channels %d", len(g.Terms), g.NumChannels())
	}
}

func TestCompileRejectsInvalid(t *testing.T) {
	f := graphFabric(t, true)
	f.Nodes[gS1].Ports[1].Peer = fabric.NoPeer
	g, err := fabric.Compile(f)
	if g != nil || !errors.Is(err, fabric.ErrAsymmetric) {
		t.Fatalf("Compile = %v, %v; want nil, ErrAsymmetric", g, err)
	}
}

func TestCompileEmpty(t *testing.T) {
	g := mustCompile(t, fabric.NewBuilder().Fabric())
	if g.NumSwitches() != 0 || g.NumChannels() != 0 || len(g.Terms) != 0 || g.MaxLID() != 0 {
		t.Fatalf("empty fabric: %+v", g)
	}
	if st := g.Hops(); st != (fabric.HopStats{Connected: true}) {
		t.Fatalf("empty fabric Hops = %+v", st)
	}
}

// checkGraph compares every part of g with a plain reading of its fabric.
func checkGraph(t *testing.T, f *fabric.Fabric, g *fabric.Graph) {
	t.Helper()
	sws := checkGraphSwitches(t, f, g)
	checkGraphChannels(t, f, g, sws)
	checkGraphTerminals(t, f, g, sws)
}

// byGUID returns f's node ids by node kind and GUID, the order Compile
// numbers switches and terminals in.
func byGUID(f *fabric.Fabric) []fabric.NodeID {
	ids := make([]fabric.NodeID, len(f.Nodes))
	for i := range ids {
		ids[i] = fabric.NodeID(i)
	}
	slices.SortFunc(ids, func(a, b fabric.NodeID) int {
		na, nb := &f.Nodes[a], &f.Nodes[b]
		return cmp.Or(cmp.Compare(na.Kind, nb.Kind), cmp.Compare(na.GUID, nb.GUID))
	})
	return ids
}

// checkGraphSwitches checks SwitchOf and Switches (f's switches in node
// GUID order) and returns the switches.
func checkGraphSwitches(t *testing.T, f *fabric.Fabric, g *fabric.Graph) []fabric.NodeID {
	t.Helper()
	var sws []fabric.NodeID
	for _, i := range byGUID(f) {
		if f.Nodes[i].Kind == fabric.Switch {
			if g.SwitchOf[i] != int32(len(sws)) {
				t.Fatalf("SwitchOf[%d] = %d, want %d", i, g.SwitchOf[i], len(sws))
			}
			sws = append(sws, fabric.NodeID(i))
		} else if g.SwitchOf[i] != -1 {
			t.Fatalf("SwitchOf[%d] = %d for a non-switch", i, g.SwitchOf[i])
		}
	}
	if !slices.Equal(g.Switches, sws) {
		t.Fatalf("Switches = %v, want %v", g.Switches, sws)
	}
	return sws
}

// checkGraphChannels checks the channels: one each way per
// switch-to-switch cable, loopbacks counted apart, ChannelAt, Off, Tail,
// Head, ports and Rev against the cables of f's switches sws.
func checkGraphChannels(t *testing.T, f *fabric.Fabric, g *fabric.Graph, sws []fabric.NodeID) {
	t.Helper()
	cables, loops := 0, 0
	for _, l := range f.Links() {
		if f.Nodes[l.A.Node].Kind == fabric.Switch && f.Nodes[l.B.Node].Kind == fabric.Switch {
			if l.A.Node == l.B.Node {
				loops++
			} else {
				cables++
			}
		}
	}
	if g.NumChannels() != 2*cables || g.Loopbacks != loops {
		t.Fatalf("channels %d loopbacks %d, want %d %d", g.NumChannels(), g.Loopbacks, 2*cables, loops)
	}
	seen := 0
	for s := range int32(len(sws)) {
		n := f.Node(sws[s])
		for p := range 256 {
			c := g.ChannelAt(s, uint8(p))
			isChan := p >= 1 && p < len(n.Ports) && n.Ports[p].Cabled() &&
				n.Ports[p].Peer.Node != sws[s] && f.Nodes[n.Ports[p].Peer.Node].Kind == fabric.Switch
			if !isChan {
				if c != -1 {
					t.Fatalf("switch %d port %d: ChannelAt %d, want -1", s, p, c)
				}
				continue
			}
			seen++
			peer := n.Ports[p].Peer
			if c < g.Off[s] || c >= g.Off[s+1] || g.Tail[c] != s || int(g.OutPort[c]) != p ||
				g.Switches[g.Head[c]] != peer.Node || g.InPort[c] != peer.Port {
				t.Fatalf("switch %d port %d: channel %d inconsistent", s, p, c)
			}
			if c > g.Off[s] && g.OutPort[c-1] >= g.OutPort[c] {
				t.Fatalf("channels of switch %d not in port order", s)
			}
			r := g.Rev[c]
			if g.Rev[r] != c || r == c || g.Head[r] != g.Tail[c] || g.Tail[r] != g.Head[c] ||
				g.OutPort[r] != g.InPort[c] || g.InPort[r] != g.OutPort[c] {
				t.Fatalf("channel %d: reverse %d inconsistent", c, r)
			}
		}
	}
	if seen != g.NumChannels() {
		t.Fatalf("ChannelAt found %d channels, want %d", seen, g.NumChannels())
	}
}

// checkGraphTerminals checks the terminals (f's cabled CA and router
// ports), their attachments to the switches sws, and the LID owners.
func checkGraphTerminals(t *testing.T, f *fabric.Fabric, g *fabric.Graph, sws []fabric.NodeID) {
	t.Helper()
	var terms []fabric.Terminal
	owner := make([][2]int32, g.MaxLID()+1)
	for i := range owner {
		owner[i] = [2]int32{-1, -1}
	}
	for s, id := range sws {
		p := f.Nodes[id].Ports[0]
		for l := 0; p.LID != 0 && l < 1<<p.LMC; l++ {
			owner[int(p.LID)+l] = [2]int32{int32(s), -1}
		}
	}
	perSwitch := make([][]int32, len(sws))
	for _, i := range byGUID(f) {
		n := &f.Nodes[i]
		if n.Kind == fabric.Switch {
			continue
		}
		for p := 1; p < len(n.Ports); p++ {
			pt := n.Ports[p]
			if !pt.Cabled() {
				continue
			}
			tm := fabric.Terminal{Node: fabric.NodeID(i), Port: uint8(p), LID: pt.LID, LMC: pt.LMC, Switch: -1}
			if f.Nodes[pt.Peer.Node].Kind == fabric.Switch {
				tm.Switch, tm.SwitchPort = g.SwitchOf[pt.Peer.Node], pt.Peer.Port
				perSwitch[tm.Switch] = append(perSwitch[tm.Switch], int32(len(terms)))
			}
			for l := 0; pt.LID != 0 && l < 1<<pt.LMC; l++ {
				owner[int(pt.LID)+l] = [2]int32{tm.Switch, int32(len(terms))}
			}
			terms = append(terms, tm)
		}
	}
	if !slices.Equal(g.Terms, terms) {
		t.Fatalf("Terms = %v, want %v", g.Terms, terms)
	}
	for s := range perSwitch {
		if got := g.TermsOf(int32(s)); !slices.Equal(got, perSwitch[s]) {
			t.Fatalf("TermsOf(%d) = %v, want %v", s, got, perSwitch[s])
		}
	}
	if g.MaxLID() != f.MaxLID() {
		t.Fatalf("MaxLID %d, fabric %d", g.MaxLID(), f.MaxLID())
	}
	for lid := range owner {
		if sw, term := g.Owner(lid); [2]int32{sw, term} != owner[lid] {
			t.Fatalf("Owner(%d) = %d %d, want %v", lid, sw, term, owner[lid])
		}
	}
}

func TestCompileRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 14))
	for trial := 0; trial < 300; trial++ {
		f := randomFabric(t, r, randOpts{maxSwitches: 15, edgeProb: 0.25, maxHosts: 3, extras: true})
		checkGraph(t, f, mustCompile(t, f))
		pf := permuted(f, r.Perm(len(f.Nodes)))
		checkGraph(t, pf, mustCompile(t, pf))
	}
}
